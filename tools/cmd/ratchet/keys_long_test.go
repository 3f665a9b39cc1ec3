package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/encryption"
	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// The acceptance run of a key rotation, behind RATCHET_TEST_LONG=1: 100,000
// jobs sealed under key k1 on PostgreSQL; a node that seals under k2 (and
// still reads k1) works them off while `ratchet keys reencrypt` runs in a
// process of its own, killed (SIGKILL) half-way and resumed with --after;
// at the end every payload and result is under k2 and opens with k2
// alone.
//
//	RATCHET_TEST_LONG=1 go test -run TestLongKeyRotation -v ./tools/cmd/ratchet

// envRatchetArgs makes the test binary run the ratchet command with these
// arguments (separated by a unit separator), as the real binary would.
const envRatchetArgs = "RATCHET_TEST_RATCHET_ARGS"

func ratchetCmd(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), envRatchetArgs+"="+strings.Join(args, "\x1f"))
	return cmd
}

var rotated = ratchet.NewTask("long.rotate", func(_ context.Context, n int) (int, error) { return n, nil })

func TestLongKeyRotation(t *testing.T) {
	longOnly(t)
	const n = 100_000
	ctx := context.Background()
	dsn, schema := migrated(t)
	st, err := storeflag.Open(ctx, dsn, "", schema, true)
	require.NoError(t, err)
	defer st.Close()
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	codecOf := func(current string, keys map[string][]byte) *encryption.Codec {
		kp, err := encryption.NewStaticKeys(current, keys)
		require.NoError(t, err)
		c, err := encryption.NewCodec(kp, encryption.Options{})
		require.NoError(t, err)
		return c
	}
	old, err := ratchet.NewClient(st.Store, ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{codecOf("k1", map[string][]byte{"k1": k1})}})
	require.NoError(t, err)
	start := time.Now()
	for i := 0; i < n; i += 10_000 {
		args := make([]int, 10_000)
		for k := range args {
			args[k] = i + k
		}
		_, err := rotated.SubmitMany(ctx, old, args)
		require.NoError(t, err)
	}
	t.Logf("%d jobs sealed under k1 in %s", n, time.Since(start).Round(time.Millisecond))

	// The node: k2 current, k1 still read. It works while the rotation runs.
	both := codecOf("k2", map[string][]byte{"k1": k1, "k2": k2})
	eng, err := engine.New(st.Store, engine.Options{
		Client:      ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler), Codecs: []ratchet.PayloadCodec{both}},
		NodeID:      "rotating",
		Concurrency: 8,
	}, rotated)
	require.NoError(t, err)
	events, unsub := eng.Subscribe(n + 1000)
	defer unsub()
	require.NoError(t, eng.Start(ctx))
	defer eng.Stop(ctx)

	env := []string{"RATCHET_ENCRYPTION_KEYS=k1:" + base64.StdEncoding.EncodeToString(k1) + ",k2:" + base64.StdEncoding.EncodeToString(k2),
		"RATCHET_ENCRYPTION_CURRENT_KEY=k2"}
	args := []string{"keys", "reencrypt", "--store", dsn, "--schema", schema, "--batch", "500"}

	// First pass: killed once it reports half the jobs done.
	first := ratchetCmd(env, args...)
	stderr, err := first.StderrPipe()
	require.NoError(t, err)
	rotStart := time.Now()
	require.NoError(t, first.Start())
	var last string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		var jobs, rewritten int
		var id string
		if _, err := fmt.Sscanf(strings.TrimSpace(sc.Text()), "%d jobs, %d values rewritten, last job %s", &jobs, &rewritten, &id); err == nil {
			last = id
			if jobs >= n/2 {
				require.NoError(t, first.Process.Kill())
				t.Logf("first pass killed after %d jobs (%d values rewritten) in %s", jobs, rewritten, time.Since(rotStart).Round(time.Millisecond))
				break
			}
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	_ = first.Wait()
	require.NotEmpty(t, last, "the first pass reported its progress")

	// Second pass: resumed after the last job the first one reported.
	second := ratchetCmd(env, append(args, "--after", last)...)
	var out bytes.Buffer
	second.Stdout = &out
	second.Stderr = io.Discard
	require.NoError(t, second.Run(), "the resumed pass")
	t.Logf("resumed pass: %s (rotation %s in all)", strings.TrimSpace(out.String()), time.Since(rotStart).Round(time.Millisecond))

	// The node finishes its work; then every value is under k2, and opens
	// with k2 alone.
	done, failed := 0, 0
	timeout := time.After(10 * time.Minute)
	for done+failed < n {
		select {
		case ev := <-events:
			switch ev.Kind {
			case engine.EventSucceeded:
				done++
			case engine.EventFailed:
				failed++
				t.Errorf("job %s failed: %s", ev.JobID, ev.Error)
			}
		case <-timeout:
			t.Fatalf("%d of %d jobs done", done+failed, n)
		}
	}
	t.Logf("the node ran %d jobs meanwhile in %s, none failed", done, time.Since(rotStart).Round(time.Millisecond))
	onlyK2, err := ratchet.NewClient(st.Store, ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{codecOf("k2", map[string][]byte{"k2": k2})}})
	require.NoError(t, err)
	o := ratchet.ListOptions{Limit: 1000}
	checked, notK2 := 0, 0
	for {
		page, err := onlyK2.ListJobs(ctx, o)
		require.NoError(t, err)
		for _, j := range page.Jobs {
			for col, v := range map[string][]byte{"payload": j.Payload, "result": j.Result} {
				if id, ok := encryption.KeyID(v); !ok || id != "k2" {
					notK2++
					if notK2 < 5 {
						t.Errorf("job %s's %s is under %q", j.ID, col, id)
					}
				}
			}
			if checked%997 == 0 {
				got, err := rotated.Result(onlyK2, j)
				require.NoError(t, err, "job %s opens with k2 alone", j.ID)
				var want int
				_, _ = fmt.Sscanf(string(must(onlyK2.JobDetail(ctx, j.ID)).Arguments), "%d", &want)
				assert.Equal(t, want, got)
			}
			checked++
		}
		if page.Next == uuid.Nil {
			break
		}
		o.After = page.Next
	}
	t.Logf("%d jobs checked: %d values not under k2", checked, notK2)
	assert.Equal(t, n, checked)
	assert.Zero(t, notK2, "every payload and result under k2")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
