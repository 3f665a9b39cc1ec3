package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// lines runs a command's stdout through a pipe and hands each line to a
// channel, so that a test waits for a line rather than for a time.
type lines struct {
	w  *io.PipeWriter
	ch chan string
}

func newLines() *lines {
	r, w := io.Pipe()
	l := &lines{w: w, ch: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l.ch <- sc.Text()
		}
		close(l.ch)
	}()
	return l
}

// await returns the first line that starts with prefix, failing the test
// when none comes within a minute or the output ends.
func (l *lines) await(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case line, ok := <-l.ch:
			if !ok {
				t.Fatalf("the output ended before a line starting %q", prefix)
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-timeout:
			t.Fatalf("no line starting %q within a minute", prefix)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for a command goroutine writing and
// a test reading.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// getJSON GETs url with the bearer token (none when empty) and decodes a
// 200 answer into v; it returns the status.
func getJSON(t *testing.T, url, token string, v any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK && v != nil {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
	}
	return resp.StatusCode
}

type overview struct {
	Total  int64            `json:"total"`
	Counts map[string]int64 `json:"counts"`
}

// awaitJobs polls the overview until it counts at least n live jobs.
func awaitJobs(t *testing.T, base, token string, n int64) overview {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for {
		var o overview
		require.Equal(t, http.StatusOK, getJSON(t, base+"/api/overview", token, &o))
		if o.Total >= n {
			return o
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the overview counts %d jobs, not %d, after a minute", o.Total, n)
		}
	}
}

// ratchet dev on an empty data directory: it creates the directory and
// the database, serves the dashboard behind the token, submits the demo's
// jobs, which its node runs, and stops on its context's end. The seeding
// is held back until the demo's recurring schedule has submitted a job,
// as happens when the machine is slow: the demo's jobs must come anyway.
func TestDevCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seedStarting = func(ctx context.Context, c *ratchet.Client) {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			page, err := c.ListJobs(ctx, ratchet.ListOptions{Limit: 1})
			if err != nil || len(page.Jobs) > 0 {
				return
			}
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
		}
	}
	t.Cleanup(func() { seedStarting = nil })
	data := filepath.Join(t.TempDir(), "data")
	out := newLines()
	var errOut lockedBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ratchet dev's standard error:\n%s", errOut.String())
		}
	})
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"dev", "--data", data, "--addr", "127.0.0.1:0", "--demo", "30", "--token", "dev-t0ken"}, out.w, &errOut)
		_ = out.w.Close()
	}()
	line := out.await(t, "dashboard: ")
	url := strings.TrimPrefix(line, "dashboard: ")
	require.True(t, strings.HasSuffix(url, "/login?token=dev-t0ken"), "the printed URL signs in: %s", url)
	base := strings.TrimSuffix(url, "/login?token=dev-t0ken")

	assert.Equal(t, http.StatusUnauthorized, getJSON(t, base+"/api/overview", "", nil), "no token: 401")
	assert.Equal(t, http.StatusUnauthorized, getJSON(t, base+"/api/overview", "wrong", nil), "a wrong token: 401")
	out.await(t, "submitted 30 demo jobs")
	o := awaitJobs(t, base, "dev-t0ken", 30)
	assert.GreaterOrEqual(t, o.Total, int64(30))

	// The node runs them: the demo's mix ends SUCCEEDED or FAILED.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for o.Counts["SUCCEEDED"] < 20 {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the node did not run the demo's jobs: %v", o.Counts)
		}
		getJSON(t, base+"/api/overview", "dev-t0ken", &o)
	}

	cancel()
	select {
	case c := <-code:
		assert.Equal(t, 0, c, errOut.String())
	case <-time.After(time.Minute):
		t.Fatal("ratchet dev did not stop within a minute of its context's end")
	}
	assert.FileExists(t, filepath.Join(data, "ratchet.db"))
}

// ratchet dashboard over a SQLite store: a token is made and printed when
// none is given; --insecure only on loopback; an unreachable store exits 1
// naming it.
func TestDashboardCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "d.db")
	var migOut, migErr bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"migrate", "--store", "sqlite:" + db}, &migOut, &migErr), migErr.String())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newLines()
	var errOut lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"dashboard", "--store", "sqlite:" + db, "--addr", "127.0.0.1:0", "--prefix", "/ops"}, out.w, &errOut)
		_ = out.w.Close()
	}()
	line := out.await(t, "ratchet dashboard: ")
	base := line[strings.LastIndex(line, " http://")+1:]
	base = strings.TrimSuffix(base, "/")
	require.True(t, strings.HasSuffix(base, "/ops"), line)
	token := strings.Fields(out.await(t, "sign in with the token "))[5]
	var o overview
	assert.Equal(t, http.StatusOK, getJSON(t, base+"/api/overview", token, &o))
	assert.Zero(t, o.Total)
	assert.Equal(t, http.StatusUnauthorized, getJSON(t, base+"/api/overview", "", nil))
	cancel()
	assert.Equal(t, 0, <-code, errOut.String())

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dashboard", "--store", "sqlite:" + db, "--insecure", "--addr", "0.0.0.0:0"}, 2, "loopback"},
		{[]string{"dashboard", "--store", "sqlite:" + db, "--user", "nopassword"}, 2, "NAME:PASSWORD"},
		{[]string{"dashboard", "--store", "sqlite:" + db, "--user", "ann:$2a$10$not-a-hash"}, 1, `credential "ann" has a malformed PasswordHash`},
		{[]string{"dashboard", "--store", "postgres://nobody@127.0.0.1:1/x?connect_timeout=2"}, 1, "127.0.0.1"},
		{[]string{"dashboard"}, 1, "--store is required"},
	} {
		var o, e bytes.Buffer
		assert.Equal(t, tc.code, run(context.Background(), tc.args, &o, &e), "%v: %s", tc.args, e.String())
		assert.Contains(t, e.String(), tc.want, "%v", tc.args)
	}
}

// ratchet dashboard --user NAME:HASH: a bcrypt hash in place of the
// password signs in with the password it hashes, not with itself.
func TestDashboardCommandHashedUser(t *testing.T) {
	db := filepath.Join(t.TempDir(), "d.db")
	var migOut, migErr bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"migrate", "--store", "sqlite:" + db}, &migOut, &migErr), migErr.String())
	const hash = "$2a$04$lIst6rCaHq7InBcNXMn44.KVHMfhsgQP3qKYeind/gjHA3QAFT5zm" // "correct horse", bcrypt.MinCost

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newLines()
	var errOut lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"dashboard", "--store", "sqlite:" + db, "--addr", "127.0.0.1:0", "--user", "ann:" + hash}, out.w, &errOut)
		_ = out.w.Close()
	}()
	line := out.await(t, "ratchet dashboard: ")
	base := strings.TrimSuffix(line[strings.LastIndex(line, " http://")+1:], "/")
	status := func(pw string) int {
		req, err := http.NewRequest("GET", base+"/api/overview", nil)
		require.NoError(t, err)
		req.SetBasicAuth("ann", pw)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, status("correct horse"))
	assert.Equal(t, http.StatusUnauthorized, status(hash), "the hash is not the password")
	cancel()
	assert.Equal(t, 0, <-code, errOut.String())
}

// The acceptance run: the built binary, on an empty data directory,
// serves the dashboard within 5 s of its start (opt-in: it builds the
// command).
func TestLongDevBinaryServesWithin5s(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") == "" {
		t.Skip("opt-in: RATCHET_TEST_LONG=1")
	}
	bin := filepath.Join(t.TempDir(), "ratchet")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	data := filepath.Join(t.TempDir(), "empty")
	cmd := exec.Command(bin, "dev", "--data", data, "--addr", "127.0.0.1:0")
	out := newLines()
	cmd.Stdout = out.w
	start := time.Now()
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url := strings.TrimPrefix(out.await(t, "dashboard: "), "dashboard: ")
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	resp, err := (&http.Client{Jar: jar}).Get(url) // the login URL: it signs in and redirects to the overview
	require.NoError(t, err)
	_ = resp.Body.Close()
	took := time.Since(start)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	t.Logf("ratchet dev served the overview %s after its start", took.Round(time.Millisecond))
	assert.Less(t, took, 5*time.Second)
}
