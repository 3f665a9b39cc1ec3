package tcpproxy

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// echoServer sends back every byte it receives.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func start(t *testing.T, target string, o Options) *Proxy {
	t.Helper()
	p, err := Start(target, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func dial(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, bufio.NewReader(c)
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string) (string, error) {
	t.Helper()
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := r.ReadString('\n')
	return string(bytes.TrimSuffix([]byte(got), []byte("\n"))), err
}

func TestForwardsBothWays(t *testing.T) {
	p := start(t, echoServer(t), Options{})
	c, r := dial(t, p)
	for _, line := range []string{"one", "two"} {
		got, err := roundTrip(t, c, r, line)
		if err != nil || got != line {
			t.Fatalf("round trip of %q: %q, %v", line, got, err)
		}
	}
}

func TestAdmitRefuses(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	p := start(t, echoServer(t), Options{Admit: func() bool { return !down.Load() }})
	c, r := dial(t, p)
	if _, err := roundTrip(t, c, r, "x"); err == nil {
		t.Fatal("a refused connection answered")
	}
	down.Store(false)
	c, r = dial(t, p)
	if got, err := roundTrip(t, c, r, "y"); err != nil || got != "y" {
		t.Fatalf("after admitting again: %q, %v", got, err)
	}
}

func TestDropClosesOpenConnections(t *testing.T) {
	p := start(t, echoServer(t), Options{})
	c, r := dial(t, p)
	if _, err := roundTrip(t, c, r, "a"); err != nil {
		t.Fatal(err)
	}
	if n := p.Drop(true); n != 1 {
		t.Fatalf("Drop reported %d connections, want 1", n)
	}
	if _, err := roundTrip(t, c, r, "b"); err == nil {
		t.Fatal("a dropped connection answered")
	}
	// New connections go through.
	c, r = dial(t, p)
	if got, err := roundTrip(t, c, r, "c"); err != nil || got != "c" {
		t.Fatalf("after the drop: %q, %v", got, err)
	}
}

// A filter drops chunks (forward false) and ends the copy (more false).
func TestFilter(t *testing.T) {
	dropped := make(chan struct{}, 1)
	p := start(t, echoServer(t), Options{Serve: func(client, server net.Conn) {
		Both(client, server, func(chunk []byte) (bool, bool) {
			switch string(chunk) {
			case "drop\n":
				dropped <- struct{}{}
				return false, true
			case "end\n":
				return false, false
			}
			return true, true
		}, nil)
	}})
	c, r := dial(t, p)
	if _, err := c.Write([]byte("drop\n")); err != nil {
		t.Fatal(err)
	}
	<-dropped // the chunk reached the filter; nothing may come back for it
	if got, err := roundTrip(t, c, r, "kept"); err != nil || got != "kept" {
		t.Fatalf("after a dropped chunk: %q, %v (the dropped one came back?)", got, err)
	}
	if _, err := roundTrip(t, c, r, "end"); err == nil {
		t.Fatal("the connection outlived a filter that ended it")
	}
}

// Close waits for the goroutines of open connections.
func TestCloseWaits(t *testing.T) {
	released := make(chan struct{})
	var served atomic.Bool
	p, err := Start(echoServer(t), Options{Serve: func(client, server net.Conn) {
		Both(client, server, nil, nil)
		<-released
		served.Store(true)
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, r := dial(t, p)
	if _, err := roundTrip(t, c, r, "x"); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a connection's Serve was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(released)
	<-closed
	if !served.Load() {
		t.Fatal("Close returned before Serve did")
	}
}
