package hubtest

import (
	"net"
	"os"
	"testing"
	"time"
)

// Reachable skips t with a one-line reason when nothing listens at addr
// (host:port), or fails it when the environment variable CI is "true": CI
// runs the servers, so a missing one there is a broken build, not a skip.
func Reachable(t testing.TB, what, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		_ = c.Close()
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s at %s unreachable under CI=true: %v", what, addr, err)
	}
	t.Skipf("%s at %s unreachable: %v", what, addr, err)
}
