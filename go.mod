module github.com/pervasim/pervasim

go 1.26

require (
	github.com/benbjohnson/clock v1.3.5
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/google/go-cmp v0.7.0
	github.com/gorilla/mux v1.8.1
)

require github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
