package hubtest

import (
	"net"
	"sync"
	"testing"

	"github.com/ratchet-go/ratchet/internal/tcpproxy"
)

// Proxy is a TCP proxy to a server, for outage tests: Down closes every
// connection and refuses new ones (accepted, then closed at once, as a
// server that restarts would), Up lets them through again. It listens on
// 127.0.0.1 and is closed at the test's cleanup.
type Proxy struct {
	p *tcpproxy.Proxy

	mu   sync.Mutex
	down bool
}

// NewProxy starts a proxy to target (host:port).
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	x := &Proxy{}
	p, err := tcpproxy.Start(target, tcpproxy.Options{Admit: x.up, Serve: func(client, server net.Conn) {
		// Down may have come between the admission and the dial; a
		// connection open before Down is closed by its Drop.
		if x.up() {
			tcpproxy.Both(client, server, nil, nil)
		}
	}})
	if err != nil {
		t.Fatalf("hubtest: proxy: %v", err)
	}
	x.p = p
	t.Cleanup(p.Close)
	return x
}

// Addr is the proxy's address (127.0.0.1:port).
func (x *Proxy) Addr() string { return x.p.Addr() }

// Down drops every connection and refuses new ones until Up.
func (x *Proxy) Down() {
	x.mu.Lock()
	x.down = true
	x.mu.Unlock()
	x.p.Drop(false)
}

// Up lets connections through again.
func (x *Proxy) Up() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.down = false
}

func (x *Proxy) up() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return !x.down
}
