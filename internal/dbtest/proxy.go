package dbtest

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ratchet-go/ratchet/internal/tcpproxy"
)

// Proxy is a TCP proxy between a store and its database server, for fault
// tests: armed with LoseAnswers, it lets chosen requests reach the server
// and then drops the server's answer and closes the connection, as a
// network failure right after the server acted would. It listens on
// 127.0.0.1 and is closed at the test's cleanup.
type Proxy struct {
	p *tcpproxy.Proxy

	mu   sync.Mutex
	rule *loseRule
	lost atomic.Int32
}

// loseRule is an armed LoseAnswers.
type loseRule struct {
	left       int
	newMatcher func() func(request []byte) bool
	done       func(answer []byte) bool
}

// NewProxy starts a proxy to target (host:port).
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	x := &Proxy{}
	p, err := tcpproxy.Start(target, tcpproxy.Options{Serve: x.serve})
	if err != nil {
		t.Fatalf("dbtest: proxy: %v", err)
	}
	x.p = p
	t.Cleanup(p.Close)
	return x
}

// Addr is the proxy's address (127.0.0.1:port).
func (x *Proxy) Addr() string { return x.p.Addr() }

// LoseAnswers arms the proxy for n answers: on each connection,
// newMatcher() returns the test of that connection's requests (it may keep
// state, such as a statement seen earlier); a request that matches is
// forwarded, and the server's answer is then held until done reports it
// complete, dropped, and both ends of the connection closed.
func (x *Proxy) LoseAnswers(n int, newMatcher func() func(request []byte) bool, done func(answer []byte) bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.rule = &loseRule{left: n, newMatcher: newMatcher, done: done}
}

// Lost returns how many answers the proxy dropped.
func (x *Proxy) Lost() int { return int(x.lost.Load()) }

// take reports whether a matching request may lose its answer, counting it.
func (x *Proxy) take() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.rule == nil || x.rule.left <= 0 {
		return false
	}
	x.rule.left--
	return true
}

// serve carries one connection under the rule armed when it opened.
func (x *Proxy) serve(client, server net.Conn) {
	x.mu.Lock()
	rule := x.rule
	x.mu.Unlock()
	if rule == nil {
		tcpproxy.Both(client, server, nil, nil)
		return
	}
	match := rule.newMatcher()
	var losing atomic.Bool // the answer to the current request is to be lost
	var held []byte
	tcpproxy.Both(client, server,
		func(request []byte) (bool, bool) {
			if match(request) && x.take() {
				losing.Store(true)
			}
			return true, true
		},
		func(answer []byte) (bool, bool) {
			if !losing.Load() {
				return true, true
			}
			held = append(held, answer...)
			if rule.done(held) {
				x.lost.Add(1)
				return false, false
			}
			return false, true
		})
}
