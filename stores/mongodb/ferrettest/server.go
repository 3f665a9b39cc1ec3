package ferrettest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// Options configure [Start].
type Options struct {
	// Dir is the directory of FerretDB's SQLite files (one per database);
	// it must exist. Required.
	Dir string
	// Logger receives FerretDB's log; nil discards it.
	Logger *slog.Logger
	// Unserialized connects clients to FerretDB directly instead of
	// through the serializing proxy (see the package documentation):
	// concurrent conditional updates of one document may then both apply.
	Unserialized bool
}

// Server is a running FerretDB.
type Server struct {
	uri      string
	upstream string      // FerretDB's own address
	turn     *sync.Mutex // the serialization shared by all proxies; nil when unserialized
	cancel   context.CancelFunc
	done     chan struct{}
	proxy    *proxy
}

// Start runs FerretDB with its SQLite handler in opts.Dir, listening on
// 127.0.0.1 on a free port, until Close or until ctx ends.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Dir == "" {
		return nil, errors.New("ferrettest: Options.Dir is empty")
	}
	abs, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("ferrettest: %w", err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs) + "/"}).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("ferrettest: start FerretDB: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	s := &Server{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = f.Run(runCtx)
	}()
	u, err := url.Parse(f.MongoDBURI()) // waits for the listener
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("ferrettest: FerretDB URI: %w", err)
	}
	s.upstream = u.Host
	if !opts.Unserialized {
		s.turn = &sync.Mutex{}
		if s.proxy, err = startProxy(u.Host, s.turn); err != nil {
			s.Close()
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
	p, err := startProxy(s.upstream, s.turn)
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

// Close stops the proxy and FerretDB and waits for them.
func (s *Server) Close() {
	if s.proxy != nil {
		s.proxy.close()
	}
	s.cancel()
	<-s.done
}
