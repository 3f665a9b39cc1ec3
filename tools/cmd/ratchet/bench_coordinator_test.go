package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBenchCoordinator runs the steady bench on two nodes of an SQLite
// store with a coordinator each, over the local Redis and NATS servers
// (skipped when one is unreachable, failed under CI=true, which runs
// both), and with none.
func TestBenchCoordinator(t *testing.T) {
	for _, tc := range []struct{ url, addr, want string }{
		{"none", "", "no coordinator (polling alone)"},
		{"redis://127.0.0.1:6379", "127.0.0.1:6379", "a Redis coordinator each"},
		{"nats://127.0.0.1:4222", "127.0.0.1:4222", "a NATS coordinator each"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if tc.addr != "" {
				c, err := net.DialTimeout("tcp", tc.addr, 2*time.Second)
				switch {
				case err == nil:
					_ = c.Close()
				case os.Getenv("CI") == "true":
					t.Fatalf("%s unreachable under CI=true: %v", tc.addr, err)
				default:
					t.Skipf("%s unreachable: %v", tc.addr, err)
				}
			}
			var out, errOut bytes.Buffer
			db := filepath.Join(t.TempDir(), "bench.db")
			code := run(context.Background(), []string{"bench", "--db", db, "--mode", "steady", "--rate", "200", "--duration", "300ms",
				"--workers", "20", "--coordinator", tc.url}, &out, &errOut)
			assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
			assert.Contains(t, out.String(), "submitted on a client-only node and run on another, "+tc.want)
			assert.Contains(t, out.String(), "latency p50")
		})
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"bench", "--mode", "steady", "--coordinator", "amqp://x"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "want redis://host:port, nats://host:port or none")
}
