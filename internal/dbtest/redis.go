package dbtest

import (
	"net"
	"net/url"
	"os"
	"testing"
)

const (
	// RedisEnv names the environment variable that selects the Redis
	// server of the tests (a redis:// URL).
	RedisEnv = "RATCHET_TEST_REDIS_URL"
	// LocalRedisURL is the server tried when RedisEnv is not set.
	LocalRedisURL = "redis://127.0.0.1:6379"
)

// Redis returns the URL of a Redis server that answers: RedisEnv's, else
// the local one. When none answers it skips the test (fails it when
// CI=true, where the machine runs one). Tests keep apart by a cluster
// name of their own, not by server.
func Redis(t testing.TB) string {
	t.Helper()
	u := os.Getenv(RedisEnv)
	if u == "" {
		u = LocalRedisURL
	}
	parsed, err := url.Parse(u)
	if err == nil {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", parsed.Host, localProbeTimeout); err == nil {
			_ = c.Close()
			return u
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("Redis at %s unreachable under CI=true: %v", u, err)
	}
	t.Skipf("Redis at %s unreachable (set %s): %v", u, RedisEnv, err)
	return ""
}
