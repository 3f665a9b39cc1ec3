package chaos

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ratchet-go/ratchet/internal/tcpproxy"
)

// proxy is a TCP proxy on 127.0.0.1 between one node and the database,
// through which the network faults are injected: added latency, reset
// connections, a black hole.
type proxy struct {
	p *tcpproxy.Proxy

	mu      sync.Mutex
	latency time.Duration
	hole    *hole // non-nil while a black hole lasts
	closed  bool
}

// hole is one black hole: ended is closed when it ends, once, by its end
// function or by the proxy's close, whichever comes first.
type hole struct {
	ended chan struct{}
	once  sync.Once
}

func (h *hole) end() { h.once.Do(func() { close(h.ended) }) }

// newProxy listens on 127.0.0.1 and forwards to target (host:port).
func newProxy(target string) (*proxy, error) {
	x := &proxy{}
	p, err := tcpproxy.Start(target, tcpproxy.Options{
		Admit: func() bool { x.await(); return true },
		Serve: func(client, server net.Conn) { tcpproxy.Both(client, server, x.hold, x.hold) },
	})
	if err != nil {
		return nil, fmt.Errorf("chaos: proxy: %w", err)
	}
	x.p = p
	return x, nil
}

// Addr is the proxy's host:port.
func (x *proxy) Addr() string { return x.p.Addr() }

// hold holds each chunk through a black hole and delays it by the
// latency.
func (x *proxy) hold([]byte) (forward, more bool) {
	x.await()
	if d := x.delay(); d > 0 {
		t := time.NewTimer(d)
		<-t.C
	}
	return true, true
}

// await returns once no black hole is in effect.
func (x *proxy) await() {
	x.mu.Lock()
	h := x.hole
	x.mu.Unlock()
	if h != nil {
		<-h.ended
	}
}

func (x *proxy) delay() time.Duration {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.latency
}

// setLatency delays every chunk by d (0 ends it).
func (x *proxy) setLatency(d time.Duration) {
	x.mu.Lock()
	x.latency = d
	x.mu.Unlock()
}

// blackHole holds every byte and every new connection until the returned
// function is called.
func (x *proxy) blackHole() (end func()) {
	h := &hole{ended: make(chan struct{})}
	x.mu.Lock()
	if !x.closed {
		x.hole = h
	}
	x.mu.Unlock()
	return func() {
		x.mu.Lock()
		if x.hole == h {
			x.hole = nil
		}
		x.mu.Unlock()
		h.end()
	}
}

// reset resets every open connection (RST to the node) and reports how many
// there were.
func (x *proxy) reset() int { return x.p.Drop(true) }

// close ends any black hole and latency, stops the proxy and closes its
// connections.
func (x *proxy) close() {
	x.mu.Lock()
	x.closed = true
	if x.hole != nil {
		x.hole.end()
		x.hole = nil
	}
	x.latency = 0
	x.mu.Unlock()
	x.p.Close()
}

var driverAddr = regexp.MustCompile(`@tcp\(([^)]*)\)`)

// dsnTarget returns the host:port that dsn connects to.
func dsnTarget(dsn string) (string, error) {
	if m := driverAddr.FindStringSubmatch(dsn); m != nil {
		return withPort(m[1], "3306"), nil
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		return "", errors.New("chaos: the network faults need a DSN with a host")
	}
	port := "5432"
	if u.Scheme == "mysql" {
		port = "3306"
	}
	return withPort(u.Host, port), nil
}

func withPort(host, port string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(host, port)
}

// dsnVia returns dsn connecting to addr instead of its own host.
func dsnVia(dsn, addr string) string {
	if driverAddr.MatchString(dsn) {
		return driverAddr.ReplaceAllLiteralString(dsn, "@tcp("+addr+")")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	u.Host = addr
	return u.String()
}

// turnHosts turns the server list of a URL DSN (scheme://user@h1,h2,h3/db)
// by k places: h2,h3,h1 for k = 1. A DSN of one server is returned as it
// is.
func turnHosts(dsn string, k int) string {
	u, err := url.Parse(dsn)
	if err != nil || !strings.Contains(u.Host, ",") {
		return dsn
	}
	hosts := strings.Split(u.Host, ",")
	k %= len(hosts)
	u.Host = strings.Join(append(hosts[k:], hosts[:k]...), ",")
	return u.String()
}
