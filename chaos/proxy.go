package chaos

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sync"
	"time"
)

// proxy is a TCP proxy on 127.0.0.1 between one node and the database,
// through which the network faults are injected: added latency, reset
// connections, a black hole.
type proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	latency time.Duration
	hole    chan struct{} // non-nil while a black hole lasts; closed when it ends
	conns   map[net.Conn]net.Conn
	closed  bool
	wg      sync.WaitGroup
}

// newProxy listens on 127.0.0.1 and forwards to target (host:port).
func newProxy(target string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("chaos: proxy: %w", err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]net.Conn{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *proxy) Addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
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

func (p *proxy) serve(c net.Conn) {
	p.await()
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = c.Close()
		_ = up.Close()
		return
	}
	p.conns[c] = up
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { p.pipe(up, c); done <- struct{}{} }()
	go func() { p.pipe(c, up); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// pipe copies from src to dst, holding each chunk through a black hole and
// delaying it by the latency.
func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.await()
			if d := p.delay(); d > 0 {
				t := time.NewTimer(d)
				<-t.C
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// await returns once no black hole is in effect.
func (p *proxy) await() {
	p.mu.Lock()
	h := p.hole
	p.mu.Unlock()
	if h != nil {
		<-h
	}
}

func (p *proxy) delay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latency
}

// setLatency delays every chunk by d (0 ends it).
func (p *proxy) setLatency(d time.Duration) {
	p.mu.Lock()
	p.latency = d
	p.mu.Unlock()
}

// blackHole holds every byte and every new connection until the returned
// function is called.
func (p *proxy) blackHole() (end func()) {
	h := make(chan struct{})
	p.mu.Lock()
	p.hole = h
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		if p.hole == h {
			p.hole = nil
		}
		p.mu.Unlock()
		close(h)
	}
}

// reset resets every open connection (RST to the node) and reports how many
// there were.
func (p *proxy) reset() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c, up := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
		_ = up.Close()
		n++
	}
	return n
}

// close stops the proxy and closes its connections.
func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	if p.hole != nil {
		close(p.hole)
		p.hole = nil
	}
	p.latency = 0
	p.mu.Unlock()
	_ = p.ln.Close()
	p.reset()
	p.wg.Wait()
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
