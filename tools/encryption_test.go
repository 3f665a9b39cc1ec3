package tools_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/encryption"
	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// The tamper tests of payload encryption, on SQLite and PostgreSQL: the
// rows of a database are altered behind the engine's back (ciphertext
// swapped between two jobs, a result moved into another job's payload
// and a payload into its own result, a flipped bit, a value under an
// unknown key id, one under a wrong key with the right id). Each altered
// job fails with a clear error that shows no plaintext, a tampered result
// makes Result fail and leaves the job SUCCEEDED, and the other jobs run.

// rawColumn writes one column of a job row directly.
type rawColumn func(t *testing.T, id uuid.UUID, column string, value []byte)

func TestEncryptionTamperSQLite(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tamper.db"), sqlite.Options{Create: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	tamper(t, s, func(t *testing.T, id uuid.UUID, column string, value []byte) {
		_, err := s.DB().ExecContext(t.Context(), "UPDATE scheduler_job SET "+column+" = ? WHERE job_id = ?", value, id.String())
		require.NoError(t, err)
	})
}

func TestEncryptionTamperPostgres(t *testing.T) {
	dsn, schema := dbtest.Postgres(t)
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	tamper(t, s, func(t *testing.T, id uuid.UUID, column string, value []byte) {
		_, err := s.Pool().Exec(t.Context(), fmt.Sprintf(`UPDATE %q.scheduler_job SET %s = $1 WHERE job_id = $2`, schema, column), value, id)
		require.NoError(t, err)
	})
}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, encryption.KeySize) }

func codecOf(t *testing.T, current string, keys map[string][]byte) *encryption.Codec {
	kp, err := encryption.NewStaticKeys(current, keys)
	require.NoError(t, err)
	c, err := encryption.NewCodec(kp, encryption.Options{})
	require.NoError(t, err)
	return c
}

func tamper(t *testing.T, store spi.Store, write rawColumn) {
	ctx := context.Background()
	codec := codecOf(t, "k2", map[string][]byte{"k1": key(1), "k2": key(2)})
	ran := make(chan string, 100)
	echo := ratchet.NewTask("tamper.echo", func(_ context.Context, s string) (string, error) {
		ran <- s
		return "result of " + s, nil
	})
	newEngine := func() (*engine.Engine, <-chan engine.Event, func()) {
		eng, err := engine.New(store, engine.Options{
			Client:          ratchet.ClientOptions{Clock: clockwork.NewRealClock(), Logger: quiet, Codecs: []ratchet.PayloadCodec{codec}},
			NodeID:          "n1",
			PollInterval:    10 * time.Millisecond,
			MinPollInterval: time.Millisecond,
		}, echo)
		require.NoError(t, err)
		events, unsub := eng.Subscribe(100)
		require.NoError(t, eng.Start(ctx))
		return eng, events, func() { _ = eng.Stop(ctx); unsub() }
	}
	wait := func(events <-chan engine.Event, ids ...uuid.UUID) map[uuid.UUID]engine.Event {
		t.Helper()
		want := map[uuid.UUID]bool{}
		for _, id := range ids {
			want[id] = true
		}
		got := map[uuid.UUID]engine.Event{}
		timeout := time.After(20 * time.Second)
		for len(got) < len(ids) {
			select {
			case ev := <-events:
				if want[ev.JobID] && ev.Kind != engine.EventRetrying {
					got[ev.JobID] = ev
				}
			case <-timeout:
				t.Fatalf("%d of %d jobs ended", len(got), len(ids))
			}
		}
		return got
	}

	// Phase 1: a job runs, so that it has a sealed result.
	eng, events, stop := newEngine()
	done, err := echo.Submit(ctx, eng.Client(), "secret-done")
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, wait(events, done)[done].Kind)
	stop()

	// Phase 2: the jobs to tamper with, and two left alone, written with
	// the engine stopped; the "unknown key" and "wrong key" ones by
	// clients whose codecs the node does not share.
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{codec}})
	require.NoError(t, err)
	submit := func(c *ratchet.Client, s string) uuid.UUID {
		id, err := echo.Submit(ctx, c, s)
		require.NoError(t, err)
		return id
	}
	other := func(current string, keys map[string][]byte) *ratchet.Client {
		c, err := ratchet.NewClient(store, ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{codecOf(t, current, keys)}})
		require.NoError(t, err)
		return c
	}
	a, b := submit(client, "secret-a"), submit(client, "secret-b")
	moved, flipped := submit(client, "secret-moved"), submit(client, "secret-flipped")
	unknownKey := submit(other("k9", map[string][]byte{"k9": key(9)}), "secret-unknown")
	wrongKey := submit(other("k2", map[string][]byte{"k2": key(7)}), "secret-wrong")
	fine1, fine2 := submit(client, "fine-1"), submit(client, "fine-2")
	get := func(id uuid.UUID) *spi.Job {
		j, err := store.GetJob(ctx, id)
		require.NoError(t, err)
		return j
	}
	ja, jb, jd := get(a), get(b), get(done)
	for _, j := range []*spi.Job{ja, jb, jd} {
		assert.True(t, encryption.IsEnvelope(j.Payload), "the payload is sealed")
		assert.NotContains(t, string(j.Payload), "secret")
	}
	write(t, a, "payload", jb.Payload)
	write(t, b, "payload", ja.Payload)
	write(t, moved, "payload", jd.Result)
	write(t, done, "job_result", jd.Payload)
	bad := bytes.Clone(get(flipped).Payload)
	bad[len(bad)-3] ^= 0x10
	write(t, flipped, "payload", bad)

	// Phase 3: the node runs them all.
	eng, events, stop = newEngine()
	defer stop()
	eng.NotifyNewWork(spi.PriorityNormal)
	got := wait(events, a, b, moved, flipped, unknownKey, wrongKey, fine1, fine2)
	for id, want := range map[uuid.UUID]string{
		a: "integrity check failed", b: "integrity check failed", moved: "integrity check failed",
		flipped: "integrity check failed", unknownKey: `unknown key id "k9"`, wrongKey: "integrity check failed",
	} {
		ev := got[id]
		t.Logf("%s: %s", id, ev.Error)
		assert.Equal(t, engine.EventFailed, ev.Kind, "job %s", id)
		assert.Contains(t, ev.Error, want, "job %s", id)
		assert.NotContains(t, ev.Error, "secret", "no plaintext in the error")
		assert.Equal(t, spi.StatusFailed, get(id).Status)
	}
	for _, id := range []uuid.UUID{fine1, fine2} {
		assert.Equal(t, engine.EventSucceeded, got[id].Kind, "an untouched job runs")
	}
	close(ran)
	var bodies []string
	for s := range ran {
		bodies = append(bodies, s)
	}
	assert.ElementsMatch(t, []string{"secret-done", "fine-1", "fine-2"}, bodies, "no tampered job ran a body")

	// The result moved over by its own payload: Result fails, and the job
	// stays SUCCEEDED.
	jd = get(done)
	_, err = echo.Result(client, jd)
	assert.ErrorIs(t, err, encryption.ErrIntegrity)
	assert.NotContains(t, err.Error(), "secret")
	assert.Equal(t, spi.StatusSucceeded, jd.Status)
	res, err := echo.Result(client, get(fine1))
	require.NoError(t, err)
	assert.Equal(t, "result of fine-1", res)
}
