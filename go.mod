module github.com/pervasim/pervasim

go 1.26

require (
	github.com/benbjohnson/clock v1.3.5
	github.com/google/go-cmp v0.7.0
	github.com/gorilla/mux v1.8.1
)
