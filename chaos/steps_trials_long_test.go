//go:build unix

package chaos_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// stepEffect is one side effect of testdata/stepsworker: the step, and the
// execution that ran it (its process and the job's crash count then).
type stepEffect struct {
	step  int
	pid   int
	crash int
}

// readEffects reads the effects file, per job, in the order written.
func readEffects(t *testing.T, path string) map[uuid.UUID][]stepEffect {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[uuid.UUID][]stepEffect{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		require.Len(t, fs, 4, "effect line %q", sc.Text())
		id, err := uuid.Parse(fs[0])
		require.NoError(t, err)
		var e stepEffect
		e.step, _ = strconv.Atoi(fs[1])
		e.pid, _ = strconv.Atoi(fs[2])
		e.crash, _ = strconv.Atoi(fs[3])
		out[id] = append(out[id], e)
	}
	require.NoError(t, sc.Err())
	return out
}

// stepsRig runs testdata/stepsworker processes against one PostgreSQL
// schema and submits five-step jobs through a client of its own.
type stepsRig struct {
	t       *testing.T
	bin     string
	dsn     string
	schema  string
	effects string
	client  *ratchet.Client
	store   *chaos.Opened
	task    *ratchet.Task[stepsJob, ratchet.Void]
}

type stepsJob struct {
	Millis int `json:"millis"`
}

func newStepsRig(t *testing.T) *stepsRig {
	bin := filepath.Join(t.TempDir(), "stepsworker")
	out, err := exec.Command(goTool(), "build", "-o", bin, "./testdata/stepsworker").CombinedOutput()
	require.NoError(t, err, "%s", out)
	dsn, schema := dbtest.Postgres(t)
	ctx := context.Background()
	opened, err := chaos.OpenStore(ctx, dsn, schema, true)
	require.NoError(t, err)
	t.Cleanup(func() { opened.Close() })
	require.NoError(t, opened.Ledger.Prepare(ctx))
	client, err := ratchet.NewClient(opened.Store, ratchet.ClientOptions{Logger: quiet})
	require.NoError(t, err)
	return &stepsRig{t: t, bin: bin, dsn: dsn, schema: schema, effects: filepath.Join(t.TempDir(), "effects"), client: client, store: opened,
		task: ratchet.NewVoidTask("steps.five", func(context.Context, stepsJob) error { return nil }, ratchet.WithMaxRetries(10))}
}

// start starts a worker process named node with the extra RATCHET_*
// settings env.
func (r *stepsRig) start(node string, env ...string) *exec.Cmd {
	cmd := exec.Command(r.bin, "--dsn", r.dsn, "--schema", r.schema, "--node", node)
	cmd.Env = append(append(os.Environ(), "STEPS_EFFECTS_FILE="+r.effects), env...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	require.NoError(r.t, cmd.Start())
	r.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// submit submits n jobs whose steps take 50 to 150 ms each.
func (r *stepsRig) submit(rng *rand.Rand, n int) []uuid.UUID {
	ids := make([]uuid.UUID, n)
	for i := range ids {
		var err error
		ids[i], err = r.task.Submit(context.Background(), r.client, stepsJob{Millis: 50 + rng.IntN(100)})
		require.NoError(r.t, err)
	}
	return ids
}

// waitFor polls the jobs ids until each passes done, for at most d.
func (r *stepsRig) waitFor(ids []uuid.UUID, d time.Duration, what string, done func(*ratchet.Job) bool) []*ratchet.Job {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for {
		jobs := make([]*ratchet.Job, len(ids))
		all := true
		for i, id := range ids {
			j, err := r.client.GetJob(context.Background(), id)
			require.NoError(r.t, err)
			jobs[i], all = j, all && done(j)
		}
		if all {
			return jobs
		}
		require.True(r.t, time.Now().Before(deadline), "jobs not %s after %s", what, d)
		time.Sleep(20 * time.Millisecond) // polling another process's progress: no channel reaches across
	}
}

// The acceptance runs of durable steps (opt-in: RATCHET_TEST_LONG=1), on
// PostgreSQL with worker processes of testdata/stepsworker, five durable
// steps a job, each appending its side effect ("JOB STEP PID CRASH")
// before its result is recorded.
//
// SIGKILL: rounds of 20 jobs; once all RUNNING on one worker, it is
// killed at a uniform random time within the jobs' run (0 to 750 ms) and
// restarted under the same node id, whose start recovers its jobs. A job
// whose run the kill cut (crash count 1) is a trial, until 200: it ends
// SUCCEEDED; every step the killed run completed and recorded ran once;
// only the step in flight at the kill may have run twice.
//
// SIGSTOP: rounds of 15 jobs on worker A, stopped at a uniform random time
// within their run, past the orphan grace (3 s) while worker B recovers
// and finishes them, then continued. A job whose run the stop cut is a
// trial, until 50: it ends SUCCEEDED with its five steps recorded once
// each, and A ran at most one step fn of it after B took it over.
func TestDurableStepsTrialsLong(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") != "1" {
		t.Skip("opt-in: RATCHET_TEST_LONG=1 (worker processes killed and stopped on PostgreSQL, about 3 min)")
	}
	r := newStepsRig(t)
	rng := rand.New(rand.NewPCG(56, 8))
	fast := []string{"RATCHET_WORKER_POLL_INTERVAL_MS=20", "RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS=1", "RATCHET_NODE_ORPHAN_GRACE_SECONDS=3",
		"RATCHET_NODE_ORPHAN_SCAN_INTERVAL_SECONDS=1", "RATCHET_NODE_MAX_CRASH_REDELIVERIES=3"}

	t.Run("kill", func(t *testing.T) {
		trials, rounds, doubled := 0, 0, 0
		for trials < 200 {
			rounds++
			require.Less(t, rounds, 60, "200 trials not reached")
			node := fmt.Sprintf("kill-%d", rounds)
			w := r.start(node, fast...)
			ids := r.submit(rng, 20)
			r.waitFor(ids, 30*time.Second, "RUNNING", func(j *ratchet.Job) bool { return j.Status == ratchet.StatusRunning })
			time.Sleep(time.Duration(rng.Int64N(int64(750 * time.Millisecond)))) // the kill's uniform time within the run
			require.NoError(t, w.Process.Signal(syscall.SIGKILL))
			_ = w.Wait()
			again := r.start(node, fast...)
			jobs := r.waitFor(ids, 60*time.Second, "finished", func(j *ratchet.Job) bool { return j.Status.Terminal() })
			require.NoError(t, again.Process.Signal(syscall.SIGTERM))
			_ = again.Wait()
			effects := readEffects(t, r.effects)
			for _, j := range jobs {
				require.Equal(t, ratchet.StatusSucceeded, j.Status, "job %s: %s", j.ID, j.LastError)
				if j.CrashCount == 0 {
					continue // finished before the kill: no trial
				}
				trials++
				killedPID, count := w.Process.Pid, map[int]int{}
				last := 0 // the last step the killed run began its effect of
				for _, e := range effects[j.ID] {
					count[e.step]++
					if e.pid == killedPID {
						last = max(last, e.step)
					}
				}
				for step := 1; step <= 5; step++ {
					switch {
					case count[step] == 0:
						t.Errorf("job %s: step %d never ran", j.ID, step)
					case count[step] > 1 && step != last:
						t.Errorf("job %s: step %d ran %d times; only the step in flight at the kill (%d) may run twice", j.ID, step, count[step], last)
					case count[step] > 2:
						t.Errorf("job %s: step %d ran %d times", j.ID, step, count[step])
					case count[step] == 2:
						doubled++
					}
				}
			}
		}
		t.Logf("SIGKILL: %d trials in %d rounds of 20 jobs; the step in flight ran twice in %d of them (killed between its effect and its record)", trials, rounds, doubled)
	})

	t.Run("stop", func(t *testing.T) {
		trials, rounds, zombieSteps := 0, 0, 0
		for trials < 50 {
			rounds++
			require.Less(t, rounds, 20, "50 trials not reached")
			a := r.start(fmt.Sprintf("stop-a-%d", rounds), fast...)
			ids := r.submit(rng, 15)
			r.waitFor(ids, 30*time.Second, "RUNNING", func(j *ratchet.Job) bool { return j.Status == ratchet.StatusRunning })
			time.Sleep(time.Duration(rng.Int64N(int64(750 * time.Millisecond))))
			require.NoError(t, a.Process.Signal(syscall.SIGSTOP))
			b := r.start(fmt.Sprintf("stop-b-%d", rounds), fast...)
			jobs := r.waitFor(ids, 60*time.Second, "finished", func(j *ratchet.Job) bool { return j.Status.Terminal() })
			require.NoError(t, a.Process.Signal(syscall.SIGCONT))
			time.Sleep(2 * time.Second) // the continued worker's runs find their claims gone
			for _, w := range []*exec.Cmd{a, b} {
				_ = w.Process.Signal(syscall.SIGTERM)
				_ = w.Wait()
			}
			effects := readEffects(t, r.effects)
			for _, j := range jobs {
				require.Equal(t, ratchet.StatusSucceeded, j.Status, "job %s: %s", j.ID, j.LastError)
				if j.CrashCount == 0 {
					continue // finished before the stop: no trial
				}
				trials++
				steps, err := r.client.JobSteps(context.Background(), j.ID)
				require.NoError(t, err)
				var names []string
				for _, s := range steps {
					names = append(names, s.Name)
				}
				assert.Equal(t, []string{"step-1", "step-2", "step-3", "step-4", "step-5"}, names, "job %s: each step recorded once, in order", j.ID)
				first := 6 // the first step B's run began
				for _, e := range effects[j.ID] {
					if e.pid == b.Process.Pid {
						first = min(first, e.step)
					}
				}
				after := 0 // steps A began at or after B's first: after it lost its claim
				for _, e := range effects[j.ID] {
					if e.pid == a.Process.Pid && e.step >= first {
						after++
					}
				}
				assert.LessOrEqual(t, after, 1, "job %s: the stopped run ran %d step fns after losing its claim", j.ID, after)
				zombieSteps += after
			}
		}
		t.Logf("SIGSTOP: %d trials in %d rounds of 15 jobs; the stopped runs ran %d step fns in all after losing their claims, none recorded", trials, rounds, zombieSteps)
	})
}
