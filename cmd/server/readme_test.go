package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shellBlocks returns the ```sh blocks of the README, each as its lines
// with continuations joined.
func shellBlocks(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]string
	var cur []string
	in := false
	pending := ""
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case !in && strings.HasPrefix(l, "```sh"):
			in, cur = true, nil
		case in && strings.HasPrefix(l, "```"):
			in = false
			blocks = append(blocks, cur)
		case in:
			if strings.HasSuffix(l, "\\") {
				pending += strings.TrimSuffix(l, "\\") + " "
				continue
			}
			cur = append(cur, pending+l)
			pending = ""
		}
	}
	return blocks
}

// words splits a shell line into words: single quotes keep everything,
// double quotes allow \" and $VAR, an unquoted # starts a comment.
func words(line string, vars map[string]string) []string {
	var out []string
	var w strings.Builder
	has := false
	expand := func(s string, i int) (string, int) { // s[i] == '$'
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		return vars[s[i+1:j]], j
	}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if has {
				out = append(out, w.String())
				w.Reset()
				has = false
			}
			i++
		case c == '#' && !has:
			return out
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			w.WriteString(line[i+1 : i+1+j])
			has, i = true, i+j+2
		case c == '"':
			i++
			for i < len(line) && line[i] != '"' {
				switch {
				case line[i] == '\\' && i+1 < len(line):
					w.WriteByte(line[i+1])
					i += 2
				case line[i] == '$':
					v, j := expand(line, i)
					w.WriteString(v)
					i = j
				default:
					w.WriteByte(line[i])
					i++
				}
			}
			has, i = true, i+1
		case c == '$':
			v, j := expand(line, i)
			w.WriteString(v)
			has, i = true, j
		default:
			w.WriteByte(c)
			has, i = true, i+1
		}
	}
	if has {
		out = append(out, w.String())
	}
	return out
}

// curl sends the request a curl command line describes, as curl would, and
// returns the status; streams (-N) are read for a moment, then closed.
func curl(t *testing.T, args []string) int {
	t.Helper()
	method, url, body, stream := "", "", "", false
	header := http.Header{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-X":
			i++
			method = args[i]
		case "-d", "--data-binary":
			i++
			body = args[i]
			if a == "--data-binary" && strings.HasPrefix(body, "@") {
				b, err := os.ReadFile(filepath.Join("..", "..", body[1:]))
				if err != nil {
					t.Fatal(err)
				}
				body = string(b)
			}
			if header.Get("Content-Type") == "" {
				header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
		case "-H":
			i++
			k, v, _ := strings.Cut(args[i], ":")
			header.Set(k, strings.TrimSpace(v))
		case "-N":
			stream = true
		case "-o":
			i++ // the body is read and dropped here
		default:
			if strings.HasPrefix(a, "-") {
				t.Fatalf("curl option %s: not understood by this test", a)
			}
			url = a
		}
	}
	if method == "" {
		method = "GET"
		if body != "" {
			method = "POST"
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("curl %s: %v", strings.Join(args, " "), err)
	}
	defer res.Body.Close()
	if stream {
		buf := make([]byte, 64)
		res.Body.Read(buf) // the stream's first bytes, then hang up
		return res.StatusCode
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		t.Errorf("curl %s = %d %s", strings.Join(args, " "), res.StatusCode, b)
	}
	return res.StatusCode
}

// runLine runs one line of a README block: a variable it sets goes into
// vars, a curl command is sent and must succeed. It returns the words of a
// curl command, nil for other lines.
func runLine(t *testing.T, line string, vars map[string]string) []string {
	t.Helper()
	ws := words(line, vars)
	switch {
	case len(ws) == 1 && strings.Contains(ws[0], "="):
		k, v, _ := strings.Cut(ws[0], "=")
		vars[k] = v
	case len(ws) > 0 && ws[0] == "curl":
		if status := curl(t, ws[1:]); status >= 300 {
			t.Errorf("README line: %s", line)
		}
		return ws
	}
	return nil
}

// TestReadmeWalkthrough runs every curl line of the README, in order, on
// one fresh server: every answer must be a success, as the README shows.
func TestReadmeWalkthrough(t *testing.T) {
	base := startServer(t)
	vars := map[string]string{}
	n := 0
	for _, block := range shellBlocks(t) {
		text := strings.Join(block, "\n")
		if !strings.Contains(text, "curl ") || strings.Contains(text, "pervasim.lan") || strings.Contains(text, "127.0.0.1:808") && !strings.Contains(text, ":8080") {
			continue // no curl, or servers with other flags (TestReadmeNATS runs those)
		}
		for _, line := range block {
			line = strings.ReplaceAll(line, "http://127.0.0.1:8080", base)
			if runLine(t, line, vars) != nil {
				n++
			}
		}
	}
	if n < 60 {
		t.Errorf("ran %d curl lines, want every one of the README's", n)
	}
}

// TestReadmeNATS runs the README's two servers joined by NATS, as its
// go run lines start them (on free ports), and every curl line of the
// block that follows; the message sent must reach the second server.
func TestReadmeNATS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	blocks := shellBlocks(t)
	var servers, calls []string
	for i, b := range blocks {
		text := strings.Join(b, "\n")
		if strings.Contains(text, "go run ./cmd/server") && strings.Contains(text, "-nats") && i+1 < len(blocks) {
			servers, calls = b, blocks[i+1]
			break
		}
	}
	if len(servers) != 2 {
		t.Fatalf("the README has no block of two servers joined by NATS")
	}
	hosts := map[string]string{}
	natsURL := ""
	for _, line := range servers {
		ws := words(line, nil)
		var args []string
		addr := ""
		for j := 3; j < len(ws); j++ {
			switch ws[j] {
			case "-addr":
				addr = ws[j+1]
				j++
			case "-nats", "-mqtt":
				args = append(args, ws[j], "127.0.0.1:0")
				j++
			case "-nats-url":
				args = append(args, ws[j], natsURL)
				j++
			default:
				args = append(args, ws[j])
			}
		}
		p := startProc(t, args...)
		hosts["http://"+addr] = p.base
		if p.nats != "" && natsURL == "" {
			natsURL = p.nats
		}
	}
	vars := map[string]string{}
	last := ""
	for _, line := range calls {
		for from, to := range hosts {
			line = strings.ReplaceAll(line, from, to)
		}
		if ws := runLine(t, line, vars); ws != nil {
			last = ws[len(ws)-1]
		}
	}
	// The last line reads what came through; the message may still be on
	// its way when it runs.
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(last)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(body), `"content":{"t":21}`) && strings.Contains(string(body), `"kind":"temp"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s = %s, want the message sent", last, body)
		}
		waitABit(context.Background())
	}
}
