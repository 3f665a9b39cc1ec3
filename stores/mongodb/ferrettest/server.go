package ferrettest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// startTimeout bounds how long [Start] waits for the server's ready line.
const startTimeout = time.Minute

// stopTimeout bounds how long [Server.Close] waits for the server to exit
// after closing its standard input, before it kills the process.
const stopTimeout = 10 * time.Second

// SourceDir returns the directory of the ferretdb command's module (the
// folder ferretdb beside this package's source), or an error naming where
// it looked when it is not there, as in a module downloaded without its
// nested modules.
func SourceDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("ferrettest: cannot locate the package's source")
	}
	dir := filepath.Join(filepath.Dir(file), "ferretdb")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("ferrettest: the ferretdb command's module is not at %s: %w", dir, err)
	}
	return dir, nil
}

// Build compiles the ferretdb command into dir and returns the path of the
// binary. It runs "go build" in [SourceDir] with GOWORK=off (the command is
// a module outside the workspace), so it needs the go command and the
// module proxy or a module cache that has FerretDB; the build cache makes
// every build after the first a matter of seconds. The binary is built
// without the race detector whatever the caller was built with: the server
// stands in for a MongoDB server, not for code under test.
func Build(ctx context.Context, dir string) (string, error) {
	src, err := SourceDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "ferretdb")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("ferrettest: build the ferretdb command in %s: %w\n%s", src, err, out)
	}
	return bin, nil
}

// Options configure [Start].
type Options struct {
	// Binary is the ferretdb command built by [Build]. Required.
	Binary string
	// Dir is the directory of FerretDB's SQLite files (one per database);
	// it must exist. Required.
	Dir string
	// Log receives the server's standard error (FerretDB's log at error
	// level, and a reason when it fails to start); nil discards it.
	Log io.Writer
	// Unserialized connects clients to FerretDB directly instead of
	// through the serializing proxy (see the package documentation):
	// concurrent conditional updates of one document may then both apply.
	Unserialized bool
}

// Server is a running FerretDB server process and the proxy in front of it.
type Server struct {
	uri      string
	upstream string // FerretDB's own address
	locks    *dbLocks
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	exited   chan struct{}
	proxy    *proxy
	stopOnce sync.Once
}

// Start starts the ferretdb command (opts.Binary) on opts.Dir, listening on
// 127.0.0.1 on a free port, waits until it accepts connections and puts the
// serializing proxy in front of it. The server runs until Close, until ctx
// ends, or until the calling process exits (it stops when its standard
// input closes).
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Binary == "" {
		return nil, errors.New("ferrettest: Options.Binary is empty (build it with Build)")
	}
	if opts.Dir == "" {
		return nil, errors.New("ferrettest: Options.Dir is empty")
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	cmd := exec.CommandContext(ctx, opts.Binary, "-dir", opts.Dir, "-listen", "127.0.0.1:0")
	cmd.Stderr = logw
	if _, set := os.LookupEnv("GOGC"); !set {
		// FerretDB's SQLite handler decodes every document of a collection
		// for most queries: garbage collection was a sixth of its time, and
		// GOGC=400 takes a fifth off the conformance kit's permit case.
		cmd.Env = append(os.Environ(), "GOGC=400")
	}
	cmd.WaitDelay = stopTimeout
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("ferrettest: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("ferrettest: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ferrettest: start %s: %w", opts.Binary, err)
	}
	s := &Server{cmd: cmd, stdin: stdin, exited: make(chan struct{})}

	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if uri, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
				ready <- uri
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	waitErr := make(chan error, 1)
	go func() {
		waitErr <- cmd.Wait()
		close(s.exited)
	}()
	var uri string
	select {
	case uri = <-ready:
	case err := <-waitErr:
		return nil, fmt.Errorf("ferrettest: the ferretdb server exited before it was ready: %v (its log went to Options.Log)", err)
	case <-time.After(startTimeout):
		s.stop()
		return nil, fmt.Errorf("ferrettest: the ferretdb server was not ready within %s", startTimeout)
	}
	u, err := url.Parse(uri)
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("ferrettest: FerretDB URI %q: %w", uri, err)
	}
	s.upstream = u.Host
	if !opts.Unserialized {
		s.locks = newDBLocks()
		if s.proxy, err = startProxy(u.Host, s.locks); err != nil {
			s.stop()
			return nil, err
		}
		u.Host = s.proxy.addr()
	}
	s.uri = clientURI(u)
	return s, nil
}

// clientURI sets the options every client of the server uses.
func clientURI(u *url.URL) string {
	q := u.Query()
	q.Set("serverMonitoringMode", "poll")
	q.Set("directConnection", "true")
	u.RawQuery = q.Encode()
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

// Endpoint is a listener of its own in front of the server, sharing the
// server's serialization, so that a test can cut the connections of one
// client without disturbing the others.
type Endpoint struct {
	p   *proxy
	uri string
}

// NewEndpoint starts an endpoint; Close stops it.
func (s *Server) NewEndpoint() (*Endpoint, error) {
	p, err := startProxy(s.upstream, s.locks)
	if err != nil {
		return nil, err
	}
	return &Endpoint{p: p, uri: clientURI(&url.URL{Scheme: "mongodb", Host: p.addr(), Path: "/"})}, nil
}

// URI returns the mongodb:// URI of the endpoint (without a database).
func (e *Endpoint) URI() string { return e.uri }

// BreakConnections closes every connection of the endpoint, as a network
// cut or a failover would: the clients' next operations on them fail, and
// the clients reconnect.
func (e *Endpoint) BreakConnections() { e.p.breakConns() }

// Close stops the endpoint and closes its connections.
func (e *Endpoint) Close() { e.p.close() }

// URI returns the mongodb:// URI of the server (without a database).
func (s *Server) URI() string { return s.uri }

// URIWithDatabase returns the URI with db as its default database.
func (s *Server) URIWithDatabase(db string) string {
	u, err := url.Parse(s.uri)
	if err != nil {
		return s.uri
	}
	u.Path = "/" + strings.TrimPrefix(db, "/")
	return u.String()
}

// Close stops the proxy and the server process and waits for them.
func (s *Server) Close() {
	if s.proxy != nil {
		s.proxy.close()
	}
	s.stop()
}

// stop closes the server's standard input, which makes it exit, and waits;
// a server that has not exited after stopTimeout is killed.
func (s *Server) stop() {
	s.stopOnce.Do(func() {
		_ = s.stdin.Close()
		select {
		case <-s.exited:
		case <-time.After(stopTimeout):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
}
