package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// The acceptance run of cancelling RUNNING jobs from the CLI: two node
// processes run 100 jobs whose bodies block until their context ends;
// `ratchet jobs cancel --status RUNNING --task T --yes` must make all 100
// CANCELLED, end every body's context in time, let no late completion
// change a status, and leave the slots free for the next 100.

// The child process: a node running cancelBlock, 50 slots; with
// envCancelCoordinator (a URL) and envCancelCluster, a node with that
// cluster coordinator and a 10 s heartbeat, so that only the coordinator's
// notice can stop a body within a second.
const (
	envCancelStore       = "RATCHET_TEST_CANCEL_STORE"
	envCancelCoordinator = "RATCHET_TEST_CANCEL_COORDINATOR"
	envCancelCluster     = "RATCHET_TEST_CANCEL_CLUSTER"
	cancelSlots          = 50
)

// cancelBlock's body prints "start ID" when it starts and "end ID NANOS"
// (the wall clock) when its context ends, on standard output.
var cancelBlock = ratchet.NewVoidTask("cancel.block", func(ctx context.Context, _ int) error {
	jc, _ := ratchet.JobFromContext(ctx)
	fmt.Printf("start %s\n", jc.ID)
	<-ctx.Done()
	fmt.Printf("end %s %d\n", jc.ID, time.Now().UnixNano())
	return ctx.Err()
})

// cancelNode runs a node until SIGTERM.
func cancelNode(spec string) int {
	o := engine.Options{Concurrency: cancelSlots, HeartbeatInterval: time.Second}
	if url := os.Getenv(envCancelCoordinator); url != "" {
		open, _, err := coordinatorOpener(url, os.Getenv(envCancelCluster), slog.New(slog.NewTextHandler(os.Stderr, nil)))
		if err == nil {
			o.Coordinator, err = open(context.Background())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "node: coordinator:", err)
			return 1
		}
		defer o.Coordinator.Close()
		o.HeartbeatInterval = 10 * time.Second
	}
	return runNode(spec, false, o, cancelBlock)
}

// bodies collects what the nodes' bodies print.
type bodies struct {
	mu      sync.Mutex
	started map[uuid.UUID]int
	ended   map[uuid.UUID]time.Time
	changed chan struct{}
}

func (b *bodies) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		id, err := uuid.Parse(f[1])
		if err != nil {
			continue
		}
		b.mu.Lock()
		switch {
		case f[0] == "start":
			b.started[id]++
		case f[0] == "end" && len(f) == 3:
			if ns, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				b.ended[id] = time.Unix(0, ns)
			}
		}
		b.mu.Unlock()
		select {
		case b.changed <- struct{}{}:
		default:
		}
	}
}

// await waits up to 30 s until cond holds over what the bodies printed.
func (b *bodies) await(t *testing.T, what string, cond func(started map[uuid.UUID]int, ended map[uuid.UUID]time.Time) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		b.mu.Lock()
		ok := cond(b.started, b.ended)
		b.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-b.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestCancelRunningAcrossProcesses(t *testing.T) {
	t.Run("PostgreSQL", func(t *testing.T) {
		dsn, schema := dbtest.Postgres(t)
		// LISTEN/NOTIFY: every body's context ends within 1 s.
		cancelAcrossProcesses(t, dsn, schema, "", "", time.Second)
	})
	t.Run("SQLite", func(t *testing.T) {
		// No wakeups: within one heartbeat (1 s here), plus the beat's
		// own claim check.
		cancelAcrossProcesses(t, "sqlite", "", filepath.Join(t.TempDir(), "cancel.db"), "", 2*time.Second)
	})
	t.Run("SQLite/Redis", func(t *testing.T) {
		// The nodes and the command share a Redis coordinator (the nodes
		// beat every 10 s): the command's notice stops every body within
		// 1 s.
		cancelAcrossProcesses(t, "sqlite", "", filepath.Join(t.TempDir(), "cancel.db"), dbtest.Redis(t), time.Second)
	})
}

// cancelAcrossProcesses runs the acceptance on the store spec (schema or
// db), the nodes and the command sharing the cluster coordinator at
// coordinator when it is not empty.
func cancelAcrossProcesses(t *testing.T, spec, schema, db, coordinator string, bound time.Duration) {
	const jobs = 2 * cancelSlots
	ctx := context.Background()
	st, err := storeflag.Open(ctx, spec, db, schema, true)
	require.NoError(t, err)
	defer st.Close()
	client, err := ratchet.NewClient(st.Store, ratchet.ClientOptions{})
	require.NoError(t, err)

	b := &bodies{started: map[uuid.UUID]int{}, ended: map[uuid.UUID]time.Time{}, changed: make(chan struct{}, 1)}
	cluster := "cancel-" + uuid.NewString()[:8]
	var procs []*exec.Cmd
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envCancelStore+"="+spec, envNodeSchema+"="+schema, envNodeDB+"="+db,
			fmt.Sprintf("%s=node-%d", envNodeID, i+1), envCancelCoordinator+"="+coordinator, envCancelCluster+"="+cluster)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		go b.read(out)
		procs = append(procs, cmd)
	}
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			assert.NoError(t, p.Wait(), "a node's graceful stop")
		}
	}()

	submit := func(jobs int) []uuid.UUID {
		var ids []uuid.UUID
		for i := range jobs {
			id, err := cancelBlock.Submit(ctx, client, i)
			require.NoError(t, err)
			ids = append(ids, id)
		}
		b.await(t, fmt.Sprintf("%d bodies to start", jobs), func(started map[uuid.UUID]int, _ map[uuid.UUID]time.Time) bool {
			for _, id := range ids {
				if started[id] == 0 {
					return false
				}
			}
			return true
		})
		return ids
	}
	cancelAll := func(ids []uuid.UUID, bound time.Duration) {
		args := []string{"jobs", "cancel", "--store", spec, "--status", "RUNNING", "--task", cancelBlock.Name(), "--yes"}
		if schema != "" {
			args = append(args, "--schema", schema)
		}
		if db != "" {
			args = append(args, "--db", db)
		}
		if coordinator != "" {
			args = append(args, "--coordinator", coordinator, "--cluster", cluster)
		}
		code, out, errOut := cli(t, args...)
		done := time.Now()
		require.Equal(t, 0, code, "jobs cancel: %s%s", out, errOut)
		b.await(t, "every body's context to end", func(_ map[uuid.UUID]int, ended map[uuid.UUID]time.Time) bool {
			for _, id := range ids {
				if ended[id].IsZero() {
					return false
				}
			}
			return true
		})
		var latest time.Duration
		b.mu.Lock()
		for _, id := range ids {
			latest = max(latest, b.ended[id].Sub(done))
		}
		b.mu.Unlock()
		t.Logf("%s: %d RUNNING jobs cancelled by the CLI; the last body's context ended %s after the command returned (bound %s)",
			st.Desc, len(ids), latest.Round(time.Millisecond), bound)
		assert.LessOrEqual(t, latest, bound, "every body's context ends within %s of the cancel", bound)
	}

	// A first round warms the nodes up: a node's listener may still be
	// connecting after its first claims, and then it learns of the cancel
	// at its next heartbeat.
	cancelAll(submit(10), 2*time.Second)
	first := submit(jobs)
	cancelAll(first, bound)
	// The late completions are superseded: every job stays as the cancel
	// left it.
	second := submit(jobs) // the slots (2 x 50) are free again
	for _, id := range first {
		j, err := client.GetJob(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, spi.StatusCancelled, j.Status, "job %s", id)
		assert.Zero(t, j.Attempts, "job %s: no attempt charged", id)
		assert.Empty(t, j.OwnerNode, "job %s", id)
	}
	cancelAll(second, bound)
	b.mu.Lock()
	for id, n := range b.started {
		assert.Equal(t, 1, n, "job %s ran once", id)
	}
	b.mu.Unlock()
}
