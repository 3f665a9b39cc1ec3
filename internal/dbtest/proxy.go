package dbtest

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a TCP proxy between a store and its database server, for fault
// tests: armed with LoseAnswers, it lets chosen requests reach the server
// and then drops the server's answer and closes the connection, as a
// network failure right after the server acted would. It listens on
// 127.0.0.1 and is closed at the test's cleanup.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	rule  *loseRule
	conns map[net.Conn]bool
	lost  atomic.Int32
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("dbtest: proxy: listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's address (127.0.0.1:port).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// LoseAnswers arms the proxy for n answers: on each connection,
// newMatcher() returns the test of that connection's requests (it may keep
// state, such as a statement seen earlier); a request that matches is
// forwarded, and the server's answer is then held until done reports it
// complete, dropped, and both ends of the connection closed.
func (p *Proxy) LoseAnswers(n int, newMatcher func() func(request []byte) bool, done func(answer []byte) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule = &loseRule{left: n, newMatcher: newMatcher, done: done}
}

// Lost returns how many answers the proxy dropped.
func (p *Proxy) Lost() int { return int(p.lost.Load()) }

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *Proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

func (p *Proxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = true
	}
}

// take reports whether a matching request may lose its answer, counting it.
func (p *Proxy) take() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rule == nil || p.rule.left <= 0 {
		return false
	}
	p.rule.left--
	return true
}

func (p *Proxy) serve(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.track(client, server)
	p.mu.Lock()
	rule := p.rule
	p.mu.Unlock()
	var match func([]byte) bool
	if rule != nil {
		match = rule.newMatcher()
	}
	var losing atomic.Bool // the answer to the current request is to be lost
	closeBoth := func() { _ = client.Close(); _ = server.Close() }

	go func() { // client -> server
		defer closeBoth()
		buf := make([]byte, 64<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				if match != nil && match(buf[:n]) && p.take() {
					losing.Store(true)
				}
				if _, werr := server.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	// server -> client
	defer closeBoth()
	buf := make([]byte, 64<<10)
	var held []byte
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if losing.Load() {
				held = append(held, buf[:n]...)
				if rule.done(held) {
					p.lost.Add(1)
					return
				}
				continue
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
