package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// loggerKey is the context key of the request's logger.
type loggerKey struct{}

// loggerOf returns the logger of the handler serving r ([Config].Logger), or
// the default logger.
func loggerOf(r *http.Request) *slog.Logger {
	if l, ok := r.Context().Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// statusRecorder notes the status and size of a response. Unwrap lets
// http.ResponseController reach the connection (Flush, write deadlines).
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Unwrap returns the wrapped writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests writes one line per request to l once it is answered: method,
// path, status, bytes and duration (for an event stream, when it ends). The
// handlers below log their own errors to l too.
func logRequests(l *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), loggerKey{}, l))
		defer func() {
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			l.LogAttrs(context.Background(), slog.LevelInfo, "request",
				slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", status),
				slog.Int64("bytes", rec.bytes), slog.Duration("duration", time.Since(start)))
		}()
		next.ServeHTTP(rec, r)
	})
}
