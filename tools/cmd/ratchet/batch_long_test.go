package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// The acceptance runs of batches on PostgreSQL, behind RATCHET_TEST_LONG=1
// (a few minutes in all):
//
//   - TestLongBatchOf100k: a batch of 100,000 children is submitted in one
//     atomic step, worked by one engine, and calls back exactly once;
//   - TestLongStreamBatchMemory: a child process streams 10,000 and then
//     1,000,000 items into a batch; its peak RSS at 1,000,000 must be
//     within 20 % of its peak at 10,000;
//   - TestLongStreamBatchKilled: a child process streaming 200,000 items
//     is killed (SIGKILL) mid-stream; ResumeBatch says where to restart,
//     a second process continues the batch from there, and the batch then
//     holds each item exactly once.
//
//	RATCHET_TEST_LONG=1 go test -run 'TestLong' -v ./tools/cmd/ratchet

// The child process that streams a batch (see streamNode).
const (
	envStreamStore  = "RATCHET_TEST_STREAM_STORE"
	envStreamSchema = "RATCHET_TEST_STREAM_SCHEMA"
	envStreamBatch  = "RATCHET_TEST_STREAM_BATCH" // the batch id
	envStreamFrom   = "RATCHET_TEST_STREAM_FROM"  // the first item
	envStreamTo     = "RATCHET_TEST_STREAM_TO"    // the item after the last
)

var longItem = ratchet.NewVoidTask("long.item", func(context.Context, int) error { return nil })

func longOnly(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") != "1" {
		t.Skip("an acceptance run of minutes: set RATCHET_TEST_LONG=1")
	}
}

// items yields the calls of items from to to-1.
func items(from, to int) iter.Seq2[ratchet.Call, error] {
	return func(yield func(ratchet.Call, error) bool) {
		for i := from; i < to; i++ {
			if !yield(longItem.With(i), nil) {
				return
			}
		}
	}
}

// streamNode streams items [from, to) into the batch the parent names
// (continuing it when it exists) and prints its peak RSS.
func streamNode(spec string) int {
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "stream:", err)
		return 1
	}
	st, err := storeflag.Open(ctx, spec, "", os.Getenv(envStreamSchema), true)
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	c, err := ratchet.NewClient(st.Store, ratchet.ClientOptions{})
	if err != nil {
		return fail(err)
	}
	id, err := uuid.Parse(os.Getenv(envStreamBatch))
	if err != nil {
		return fail(err)
	}
	from, err1 := strconv.Atoi(os.Getenv(envStreamFrom))
	to, err2 := strconv.Atoi(os.Getenv(envStreamTo))
	if err1 != nil || err2 != nil {
		return fail(fmt.Errorf("bad range %q..%q", os.Getenv(envStreamFrom), os.Getenv(envStreamTo)))
	}
	start := time.Now()
	_, n, err := c.StreamBatch(ctx, ratchet.BatchSpec{ID: id, Name: "long stream"}, items(from, to))
	if err != nil {
		return fail(err)
	}
	fmt.Printf("persisted %d in %s peak_rss_kb %d\n", n, time.Since(start).Round(time.Millisecond), peakRSS())
	return 0
}

// peakRSS is the process's peak resident set (VmHWM), in KiB; 0 where
// /proc does not tell.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// streamCmd is the child process that streams items [from, to) into
// batch id of the schema.
func streamCmd(dsn, schema string, id uuid.UUID, from, to int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envStreamStore+"="+dsn, envStreamSchema+"="+schema, envStreamBatch+"="+id.String(),
		envStreamFrom+"="+strconv.Itoa(from), envStreamTo+"="+strconv.Itoa(to))
	cmd.Stderr = os.Stderr
	return cmd
}

// migrated creates the schema's tables before the child processes open
// it, as a deployment would.
func migrated(t *testing.T) (dsn, schema string) {
	dsn, schema = dbtest.Postgres(t)
	st, err := storeflag.Open(context.Background(), dsn, "", schema, true)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	return dsn, schema
}

func TestLongBatchOf100k(t *testing.T) {
	longOnly(t)
	const n = 100_000
	ctx := context.Background()
	dsn, schema := migrated(t)
	st, err := storeflag.Open(ctx, dsn, "", schema, true)
	require.NoError(t, err)
	defer st.Close()
	var callbacks atomic.Int32
	ended := make(chan *ratchet.BatchStatus, 10)
	var eng *engine.Engine
	done := ratchet.NewVoidTask("long.batch.done", func(ctx context.Context, _ string) error {
		jc, _ := ratchet.JobFromContext(ctx)
		s, err := eng.Client().Batch(ctx, jc.BatchID())
		if err == nil {
			callbacks.Add(1)
			ended <- s
		}
		return err
	})
	eng, err = engine.New(st.Store, engine.Options{Client: ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)}, NodeID: "long-1", Concurrency: 200}, longItem, done)
	require.NoError(t, err)
	calls := make([]ratchet.Call, n)
	for i := range calls {
		calls[i] = longItem.With(i)
	}
	ok := done.With("ok")
	start := time.Now()
	id, err := eng.Client().SubmitBatch(ctx, ratchet.BatchSpec{Name: "long 100k", OnSuccess: &ok, OnFailure: &ok}, calls)
	require.NoError(t, err)
	submitted := time.Since(start)
	require.NoError(t, eng.Start(ctx))
	defer eng.Stop(ctx)
	var s *ratchet.BatchStatus
	select {
	case s = <-ended:
	case <-time.After(10 * time.Minute):
		t.Fatal("no callback within 10 minutes")
	}
	total := time.Since(start)
	// Any second callback would come within the finisher's next passes.
	timer := time.NewTimer(3 * engine.DefaultBatchFinishInterval)
	defer timer.Stop()
	select {
	case <-ended:
		t.Fatal("a second callback")
	case <-timer.C:
	}
	page, err := eng.Client().ListJobs(ctx, ratchet.ListOptions{Task: "long.batch.done", Limit: 10})
	require.NoError(t, err)
	t.Logf("PostgreSQL: %d children submitted in one step in %s; batch %s, callback after %s (%.0f children/s end to end); counts %v",
		n, submitted.Round(time.Millisecond), s.Outcome, total.Round(time.Millisecond), n/total.Seconds(), s.Counts)
	assert.Equal(t, int32(1), callbacks.Load(), "the callback ran once")
	assert.Len(t, page.Jobs, 1, "one callback job")
	assert.Equal(t, ratchet.BatchSucceeded, s.Outcome)
	assert.Equal(t, n, s.Counts[ratchet.StatusSucceeded])
	assert.Equal(t, int64(n), s.Persisted)
	assert.Equal(t, id, s.ID)
}

// streamed runs the stream child for items [0, n) into a new batch and
// returns its peak RSS in KiB.
func streamed(t *testing.T, dsn, schema string, n int) int64 {
	id := uuid.Must(uuid.NewV7())
	cmd := streamCmd(dsn, schema, id, 0, n)
	out, err := cmd.Output()
	require.NoError(t, err)
	var persisted, rss int64
	var took string
	_, err = fmt.Sscanf(string(out), "persisted %d in %s peak_rss_kb %d", &persisted, &took, &rss)
	require.NoError(t, err, "child output %q", out)
	require.Equal(t, int64(n), persisted)
	t.Logf("streamed %d items in %s, peak RSS %d KiB (%.0f items/s)", n, took, rss, float64(n)/mustDuration(t, took).Seconds())
	return rss
}

func mustDuration(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	require.NoError(t, err)
	return d
}

func TestLongStreamBatchMemory(t *testing.T) {
	longOnly(t)
	dsn, schema := migrated(t)
	small := streamed(t, dsn, schema, 10_000)
	large := streamed(t, dsn, schema, 1_000_000)
	t.Logf("peak RSS: %d KiB at 10,000 items, %d KiB at 1,000,000 (%.2f×)", small, large, float64(large)/float64(small))
	require.Positive(t, small)
	assert.LessOrEqual(t, float64(large), 1.2*float64(small), "peak RSS at 1,000,000 items within 20 %% of its peak at 10,000")
}

func TestLongStreamBatchKilled(t *testing.T) {
	longOnly(t)
	const n = 200_000
	ctx := context.Background()
	dsn, schema := migrated(t)
	st, err := storeflag.Open(ctx, dsn, "", schema, true)
	require.NoError(t, err)
	defer st.Close()
	c, err := ratchet.NewClient(st.Store, ratchet.ClientOptions{})
	require.NoError(t, err)

	id := uuid.Must(uuid.NewV7())
	first := streamCmd(dsn, schema, id, 0, n)
	require.NoError(t, first.Start())
	// Kill the submitter once a quarter of the items are persisted: in
	// the middle of a chunk's transaction, most likely.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Minute)
	for persisted := int64(0); persisted < n/4; {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the stream did not reach a quarter in 5 minutes")
		}
		persisted, err = c.ResumeBatch(ctx, id)
		if err != nil {
			require.ErrorIs(t, err, ratchet.ErrNotFound, "before the child created the batch")
		}
	}
	require.NoError(t, first.Process.Kill())
	_ = first.Wait()

	from, err := c.ResumeBatch(ctx, id)
	require.NoError(t, err)
	second := streamCmd(dsn, schema, id, int(from), n)
	out, err := second.Output()
	require.NoError(t, err, "the second submitter continues the batch")

	s, err := c.Batch(ctx, id)
	require.NoError(t, err)
	assert.True(t, s.Sealed)
	assert.Equal(t, int64(n), s.Persisted)
	seen := make([]int, n)
	o := ratchet.ListOptions{WorkflowID: id, Limit: 1000}
	children := 0
	for {
		page, err := c.ListJobs(ctx, o)
		require.NoError(t, err)
		for _, j := range page.Jobs {
			k, err := strconv.Atoi(string(j.Payload))
			require.NoError(t, err, "payload %q", j.Payload)
			seen[k]++
			children++
		}
		if page.Next == uuid.Nil {
			break
		}
		o.After = page.Next
	}
	dups, missing := 0, 0
	for _, k := range seen {
		switch {
		case k == 0:
			missing++
		case k > 1:
			dups++
		}
	}
	t.Logf("killed after %d of %d items persisted; resumed at %d (%s); %d children, %d items twice, %d missing",
		from, n, from, strings.TrimSpace(string(out)), children, dups, missing)
	assert.Equal(t, n, children)
	assert.Zero(t, dups, "no duplicate child")
	assert.Zero(t, missing, "no item lost")
}
