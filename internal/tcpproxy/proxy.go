package tcpproxy

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// Options shape a Proxy. The zero value forwards every byte both ways.
type Options struct {
	// Admit runs for each accepted connection before the target is dialed.
	// It may block (a black hole holds new connections); false closes the
	// connection at once (a server that is down). Nil admits every one.
	Admit func() bool
	// Serve carries one connection's traffic between client (the accepted
	// side) and server (the dialed side), and returns when it is done; the
	// proxy then closes both. Nil: Both(client, server, nil, nil).
	Serve func(client, server net.Conn)
	// DialTimeout bounds each dial of the target; 0 is 5 seconds.
	DialTimeout time.Duration
}

// Proxy forwards the TCP connections it accepts on 127.0.0.1 to a target.
// Its methods are safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string
	o      Options

	mu     sync.Mutex
	conns  map[net.Conn]net.Conn // accepted -> dialed
	closed bool
	wg     sync.WaitGroup
}

// Start listens on a free port of 127.0.0.1 and forwards what it accepts to
// target (host:port).
func Start(target string, o Options) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tcpproxy: listen: %w", err)
	}
	if o.Serve == nil {
		o.Serve = func(client, server net.Conn) { Both(client, server, nil, nil) }
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	p := &Proxy{ln: ln, target: target, o: o, conns: map[net.Conn]net.Conn{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address (127.0.0.1:port).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

func (p *Proxy) serve(client net.Conn) {
	if p.o.Admit != nil && !p.o.Admit() {
		_ = client.Close()
		return
	}
	server, err := net.DialTimeout("tcp", p.target, p.o.DialTimeout)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[client] = server
	p.mu.Unlock()
	p.o.Serve(client, server)
	_ = client.Close()
	_ = server.Close()
	p.mu.Lock()
	delete(p.conns, client)
	p.mu.Unlock()
}

// Drop closes every connection open now, both sides, and returns how many
// there were. With reset, the client's side is closed with a TCP reset (no
// lingering), as a network failure would.
func (p *Proxy) Drop(reset bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for client, server := range p.conns {
		if tc, ok := client.(*net.TCPConn); ok && reset {
			_ = tc.SetLinger(0)
		}
		_ = client.Close()
		_ = server.Close()
	}
	return len(p.conns)
}

// Close stops accepting, drops every connection and waits until their
// goroutines are done. A Serve or an Admit that blocks must be released
// first.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.Drop(false)
	p.wg.Wait()
}

// Filter sees each chunk read from one side before it is written to the
// other: forward false drops the chunk, more false ends the copy.
type Filter func(chunk []byte) (forward, more bool)

// Pipe copies src to dst chunk by chunk, through f when it is not nil,
// until a read or a write fails or f ends it.
func Pipe(dst, src net.Conn, f Filter) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			forward, more := true, true
			if f != nil {
				forward, more = f(buf[:n])
			}
			if forward {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if !more {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Both copies client to server through up and server to client through
// down (either may be nil) and returns once either way has ended and both
// connections are closed.
func Both(client, server net.Conn, up, down Filter) {
	done := make(chan struct{}, 2)
	go func() { Pipe(server, client, up); done <- struct{}{} }()
	go func() { Pipe(client, server, down); done <- struct{}{} }()
	<-done
	_ = client.Close()
	_ = server.Close()
	<-done
}
