// Package httpapi serves the simulation ([sim.Home]) and the mediation
// engine over HTTP, with the paths, shapes and status codes of the REST
// contract. [NewHandler] returns one http.Handler for both.
//
// Handlers only translate: they decode the request, call one domain method
// and encode its result. Every error becomes a JSON body
// {"error": "<sentence>", "code": "<kind>"} whose status comes from one
// table (errors.go): invalid 400, forbidden 403, not_found 404,
// method_not_allowed 405 with an Allow header, conflict 409, too_large 413,
// internal 500, busy 503 with a Retry-After header, insufficient_storage 507.
// Every route is listed in routes.go.
//
// # Concurrency
//
// The handler is safe for concurrent use; the domain objects it serves are
// too.
package httpapi
