//go:build unix

package chaos_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/internal/dbtest/privatedb"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// Node timings of every scenario: short, so that a crash is detected and
// recovered within seconds (worst case scan + grace after the last
// heartbeat).
const (
	heartbeat = 1 * time.Second
	grace     = 3 * time.Second
	scan      = 1 * time.Second
	// slack absorbs scheduling delays on a busy machine (2 shared cores).
	slack = 2 * time.Second
	// tick is how often the scenarios poll the database.
	tick = 50 * time.Millisecond
)

// workerBin is the worker command, built once by TestMain.
var workerBin string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == privateDBArg {
		if err := privatedb.Main(context.Background(), os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := runTests(m)
	stopGalera()
	os.Exit(code)
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ratchet-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	workerBin = filepath.Join(dir, "worker")
	build := exec.Command(goTool(), "build", "-o", workerBin, "./cmd/worker")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos: building the worker failed:", err)
		return 1
	}
	return m.Run()
}

// goTool is the go command that runs these tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// cluster is one scenario's database schema, a client on it, and the worker
// processes started on it.
type cluster struct {
	t      *testing.T
	dsn    string
	schema string
	pool   *pgxpool.Pool
	client *ratchet.Client
	tasks  chaos.Tasks // for submitting
	dir    string      // the workers' stderr files
	starts int
}

// newCluster prepares a fresh schema (Ratchet tables and chaos_run).
func newCluster(t *testing.T) *cluster {
	t.Helper()
	dsn, schema := dbtest.Postgres(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, chaos.Prepare(ctx, pool, schema))
	store, err := postgres.New(ctx, pool, postgres.Options{Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{Logger: quiet})
	require.NoError(t, err)
	return &cluster{t: t, dsn: dsn, schema: schema, pool: pool, client: client, tasks: chaos.NewTasks(nil), dir: t.TempDir()}
}

// workerEnv is the environment of a worker: this process's, without its
// RATCHET_* settings, plus the scenario timings, the concurrency and extra
// (KEY=VALUE).
func workerEnv(concurrency int, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RATCHET_") {
			env = append(env, kv)
		}
	}
	secs := func(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }
	env = append(env,
		"RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS="+secs(heartbeat),
		"RATCHET_NODE_ORPHAN_GRACE_SECONDS="+secs(grace),
		"RATCHET_NODE_ORPHAN_SCAN_INTERVAL_SECONDS="+secs(scan),
		"RATCHET_WORKER_POLL_INTERVAL_MS=250",
		"RATCHET_WORKER_SHUTDOWN_TIMEOUT_SECONDS=5",
		"RATCHET_WORKER_CONCURRENCY="+strconv.Itoa(concurrency),
	)
	return append(env, extra...)
}

// worker is one worker process and the lines it printed.
type worker struct {
	t      *testing.T
	node   string
	cmd    *exec.Cmd
	stderr string // path of its stderr file

	mu      sync.Mutex
	lines   []chaos.Line
	changed chan struct{} // closed (and replaced) on every new line and at exit
	exited  chan struct{} // closed once the process is reaped
	state   *os.ProcessState
}

// start starts a worker named node with env and, when ready is set, waits
// for its "ready" line. The worker is killed at the end of the test if it
// is still running.
func (c *cluster) start(node string, env []string, ready bool) *worker {
	c.t.Helper()
	c.starts++
	cmd := exec.Command(workerBin, "--dsn", c.dsn, "--schema", c.schema, "--node", node)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	require.NoError(c.t, err)
	path := filepath.Join(c.dir, fmt.Sprintf("%02d-%s.stderr", c.starts, node))
	f, err := os.Create(path)
	require.NoError(c.t, err)
	cmd.Stderr = f
	require.NoError(c.t, cmd.Start())
	w := &worker{t: c.t, node: node, cmd: cmd, stderr: path, changed: make(chan struct{}), exited: make(chan struct{})}
	go w.read(stdout, f)
	c.t.Cleanup(func() {
		select {
		case <-w.exited:
		default:
			_ = cmd.Process.Kill() // also ends a stopped (SIGSTOP) process
			<-w.exited
		}
		if c.t.Failed() {
			w.dumpStderr()
		}
	})
	if ready {
		w.await(10*time.Second, "ready", func(ls []chaos.Line) bool { return count(ls, is(chaos.LineReady)) > 0 })
	}
	return w
}

// read collects the worker's stdout lines until EOF, then reaps it.
func (w *worker) read(stdout io.Reader, stderr *os.File) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var l chaos.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			l = chaos.Line{Event: "garbage", Error: sc.Text()}
		}
		w.mu.Lock()
		w.lines = append(w.lines, l)
		close(w.changed)
		w.changed = make(chan struct{})
		w.mu.Unlock()
	}
	_ = w.cmd.Wait()
	_ = stderr.Close()
	w.mu.Lock()
	w.state = w.cmd.ProcessState
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
	close(w.exited)
}

// snapshot returns the lines printed so far, whether the process exited,
// and a channel closed at the next change.
func (w *worker) snapshot() ([]chaos.Line, bool, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]chaos.Line(nil), w.lines...), w.state != nil, w.changed
}

// Lines returns the lines printed so far.
func (w *worker) Lines() []chaos.Line {
	ls, _, _ := w.snapshot()
	return ls
}

// await waits until cond holds of the worker's lines, failing the test
// after timeout or when the worker exits first.
func (w *worker) await(timeout time.Duration, what string, cond func([]chaos.Line) bool) {
	w.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		ls, exited, changed := w.snapshot()
		if cond(ls) {
			return
		}
		if exited {
			w.t.Fatalf("worker %s exited (%s) before %s", w.node, w.exitDesc(), what)
		}
		select {
		case <-changed:
		case <-deadline.C:
			w.t.Fatalf("worker %s: no %s within %s", w.node, what, timeout)
		}
	}
}

// signal sends sig to the worker.
func (w *worker) signal(sig syscall.Signal) {
	w.t.Helper()
	require.NoError(w.t, w.cmd.Process.Signal(sig), "signal %s to %s", sig, w.node)
}

// kill sends SIGKILL and waits for the process to be reaped.
func (w *worker) kill() {
	w.t.Helper()
	w.signal(syscall.SIGKILL)
	<-w.exited
}

// wait waits up to timeout for the process to exit and returns its state.
func (w *worker) wait(timeout time.Duration) *os.ProcessState {
	w.t.Helper()
	select {
	case <-w.exited:
	case <-time.After(timeout):
		w.t.Fatalf("worker %s still running after %s", w.node, timeout)
	}
	return w.state
}

// stop stops the worker gracefully (SIGTERM) and requires a clean exit
// with a "stopped" line.
func (w *worker) stop() {
	w.t.Helper()
	w.signal(syscall.SIGTERM)
	st := w.wait(20 * time.Second)
	require.True(w.t, st.Success(), "worker %s exited %s after SIGTERM", w.node, w.exitDesc())
	require.Positive(w.t, count(w.Lines(), is(chaos.LineStopped)), "worker %s printed no stopped line", w.node)
}

// killedBy reports the signal that ended the process, or -1.
func (w *worker) killedBy() syscall.Signal {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == nil {
		return -1
	}
	if ws, ok := w.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return -1
}

func (w *worker) exitDesc() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == nil {
		return "running"
	}
	return w.state.String()
}

// dumpStderr logs the end of the worker's stderr (the engine's logs).
func (w *worker) dumpStderr() {
	b, err := os.ReadFile(w.stderr)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	w.t.Logf("worker %s (%s), last stderr lines:\n%s", w.node, w.exitDesc(), strings.Join(lines, "\n"))
}

// is matches lines of one event.
func is(event string) func(chaos.Line) bool {
	return func(l chaos.Line) bool { return l.Event == event }
}

// count counts the lines that match.
func count(ls []chaos.Line, match func(chaos.Line) bool) int {
	n := 0
	for _, l := range ls {
		if match(l) {
			n++
		}
	}
	return n
}

// jobsOf returns the distinct jobs of the matching lines.
func jobsOf(ls []chaos.Line, match func(chaos.Line) bool) map[uuid.UUID]bool {
	out := map[uuid.UUID]bool{}
	for _, l := range ls {
		if match(l) {
			out[l.Job] = true
		}
	}
	return out
}

// eventually polls cond every tick until it holds and returns how long that
// took; it fails the test after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) time.Duration {
	t.Helper()
	start := time.Now()
	tk := time.NewTicker(tick)
	defer tk.Stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		ok, err := cond()
		require.NoError(t, err, what)
		if ok {
			return time.Since(start)
		}
		select {
		case <-tk.C:
		case <-deadline.C:
			t.Fatalf("not within %s: %s", timeout, what)
		}
	}
}

// jobs returns every job of the schema by id.
func (c *cluster) jobs() (map[uuid.UUID]*ratchet.Job, error) {
	page, err := c.client.ListJobs(context.Background(), ratchet.ListOptions{Limit: 10000})
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]*ratchet.Job, len(page.Jobs))
	for _, j := range page.Jobs {
		out[j.ID] = j
	}
	return out, nil
}

// allIn reports whether every job of ids has status st.
func (c *cluster) allIn(ids []uuid.UUID, st ratchet.Status) func() (bool, error) {
	return func() (bool, error) {
		jobs, err := c.jobs()
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			j, ok := jobs[id]
			if !ok {
				return false, fmt.Errorf("job %s missing", id)
			}
			if j.Status != st {
				return false, nil
			}
		}
		return true, nil
	}
}

// runningOn returns the claims of the jobs RUNNING on node (job id to claim
// sequence).
func (c *cluster) runningOn(node string) (map[uuid.UUID]int64, error) {
	jobs, err := c.jobs()
	if err != nil {
		return nil, err
	}
	out := map[uuid.UUID]int64{}
	for _, j := range jobs {
		if j.Status == ratchet.StatusRunning && j.OwnerNode == node {
			out[j.ID] = j.ClaimSeq
		}
	}
	return out, nil
}

// runs returns chaos_run.
func (c *cluster) runs() []chaos.Execution {
	c.t.Helper()
	runs, err := chaos.Runs(context.Background(), c.pool, c.schema)
	require.NoError(c.t, err)
	return runs
}

// runsByJob groups runs by job.
func runsByJob(runs []chaos.Execution) map[uuid.UUID][]chaos.Execution {
	out := map[uuid.UUID][]chaos.Execution{}
	for _, r := range runs {
		out[r.JobID] = append(out[r.JobID], r)
	}
	return out
}
