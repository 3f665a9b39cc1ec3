package chaos

import (
	"io"
	"net"
	"testing"
	"time"
)

// A black hole holds the bytes until it ends; closing the proxy during one
// ends it, and the fault's own end afterwards is harmless.
func TestBlackHoleEndsOnceWhicheverComesFirst(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	px, err := newProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", px.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echo := func() error {
		if _, err := c.Write([]byte("x")); err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		_, err := io.ReadFull(c, make([]byte, 1))
		return err
	}
	if err := echo(); err != nil {
		t.Fatalf("before the black hole: %v", err)
	}
	end := px.blackHole()
	if err := echo(); err == nil {
		t.Fatal("a byte crossed the black hole")
	}
	px.close() // ends the hole and the connection
	end()      // must not close the hole a second time
}

func TestTurnHosts(t *testing.T) {
	dsn := "mysql://root@127.0.0.1:1,127.0.0.1:2,127.0.0.1:3/test"
	for k, want := range map[int]string{
		0: dsn,
		1: "mysql://root@127.0.0.1:2,127.0.0.1:3,127.0.0.1:1/test",
		3: dsn,
	} {
		if got := turnHosts(dsn, k); got != want {
			t.Errorf("turnHosts(%d) = %s, want %s", k, got, want)
		}
	}
	if got := turnHosts("mysql://root@127.0.0.1:1/test", 1); got != "mysql://root@127.0.0.1:1/test" {
		t.Errorf("one server turned: %s", got)
	}
}
