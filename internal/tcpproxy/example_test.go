package tcpproxy_test

import (
	"fmt"
	"io"
	"net"

	"github.com/ratchet-go/ratchet/internal/tcpproxy"
)

// A proxy that forwards everything, and drops its connections on demand.
func Example() {
	server, _ := net.Listen("tcp", "127.0.0.1:0")
	defer server.Close()
	go func() {
		c, _ := server.Accept()
		_, _ = io.Copy(c, c) // echo
	}()

	p, err := tcpproxy.Start(server.Addr().String(), tcpproxy.Options{})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	c, _ := net.Dial("tcp", p.Addr())
	_, _ = c.Write([]byte("ping"))
	buf := make([]byte, 4)
	_, _ = io.ReadFull(c, buf)
	fmt.Println(string(buf))
	fmt.Println("dropped:", p.Drop(true))
	// Output:
	// ping
	// dropped: 1
}
