package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/encryption"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// ratchet keys reencrypt seals every payload under the current key, and a
// second run has nothing left to do; bad keys and flags are refused.
func TestKeysReencryptCommand(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "keys.db")
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	s, err := sqlite.Open(ctx, db, sqlite.Options{Create: true})
	require.NoError(t, err)
	kp, err := encryption.NewStaticKeys("k1", map[string][]byte{"k1": k1})
	require.NoError(t, err)
	codec, err := encryption.NewCodec(kp, encryption.Options{})
	require.NoError(t, err)
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{codec}})
	require.NoError(t, err)
	ids, err := rotated.SubmitMany(ctx, c, []int{1, 2, 3, 4, 5})
	require.NoError(t, err)
	plain, err := ratchet.NewClient(s, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, err = rotated.Submit(ctx, plain, 6) // written before encryption was on
	require.NoError(t, err)
	_, err = c.PutSchedule(ctx, rotated.Recurring("hourly", "@every 1h", 42))
	require.NoError(t, err)
	waiting, err := rotated.Submit(ctx, c, 7, ratchet.AwaitSignal("go", 0), ratchet.WithSignalKey("order-7"))
	require.NoError(t, err)
	n, err := c.SignalByKey(ctx, "order-7", "go", "approved")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NoError(t, s.Close())

	t.Setenv("RATCHET_ENCRYPTION_KEYS", "k1:"+base64.StdEncoding.EncodeToString(k1)+",k2:"+base64.StdEncoding.EncodeToString(k2))
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"keys", "reencrypt", "--store", "sqlite:" + db, "--batch", "2"}, &out, &errOut)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	assert.Contains(t, out.String(), `reencrypt: 7 jobs, 8 values: 8 rewritten (1 were plaintext), 0 already under "k2"`, "the waiting job's payload and its signal's too")
	assert.Contains(t, out.String(), "reencrypt: 1 recurring schedules rewritten")

	s, err = sqlite.Open(ctx, db, sqlite.Options{Create: true})
	require.NoError(t, err)
	defer s.Close()
	entries, err := s.ListAudit(ctx, 0, 1)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the rotation is in the audit log")
	assert.Equal(t, "keys.reencrypt", entries[0].Action)
	assert.Equal(t, `key k2`, entries[0].Target)
	assert.Equal(t, actor(), entries[0].Actor)
	for _, id := range ids {
		j, err := s.GetJob(ctx, id)
		require.NoError(t, err)
		key, ok := encryption.KeyID(j.Payload)
		assert.True(t, ok && key == "k2", "job %s under %q", id, key)
	}
	kp2, err := encryption.NewStaticKeys("k2", map[string][]byte{"k2": k2})
	require.NoError(t, err)
	only2, err := encryption.NewCodec(kp2, encryption.Options{})
	require.NoError(t, err)
	c2, err := ratchet.NewClient(s, ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{only2}})
	require.NoError(t, err)
	w, err := s.GetJob(ctx, waiting)
	require.NoError(t, err)
	require.NotNil(t, w.Signal)
	key, _ := encryption.KeyID(w.Signal.Payload)
	assert.Equal(t, "k2", key, "the signal delivered by key is sealed under k2")
	_, err = only2.Open(ctx, encryption.Binding{Surface: "signal", JobID: waiting}, w.Signal.Payload)
	assert.NoError(t, err, "and bound to its job now")
	info, err := c2.GetSchedule(ctx, "hourly")
	require.NoError(t, err)
	key, _ = encryption.KeyID(info.Definition.Payload)
	assert.Equal(t, "k2", key, "the schedule's arguments are under k2")
	fired, err := c2.TriggerSchedule(ctx, "hourly")
	require.NoError(t, err, "a fire opens them with k2 alone")
	d, err := c2.JobDetail(ctx, fired)
	require.NoError(t, err)
	assert.Equal(t, "42", string(d.Arguments))
	require.NoError(t, s.Close())
	out.Reset()
	code = run(ctx, []string{"keys", "reencrypt", "--store", "sqlite:" + db}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	assert.Contains(t, out.String(), `0 rewritten (0 were plaintext), 9 already under "k2"`, "the triggered job too")
	assert.Contains(t, out.String(), "reencrypt: 0 recurring schedules rewritten")

	for _, tc := range []struct {
		args []string
		env  string
		code int
		want string
	}{
		{[]string{"keys"}, "", 2, "a subcommand is needed: reencrypt"},
		{[]string{"keys", "reencrypt"}, "", 2, "--store is required"},
		{[]string{"keys", "reencrypt", "--store", "sqlite:" + db, "--after", "x"}, "", 1, `--after "x"`},
		{[]string{"keys", "reencrypt", "--store", "sqlite:" + db, "--algorithm", "rot13"}, "", 1, `--algorithm "rot13"`},
		{[]string{"keys", "reencrypt", "--store", "sqlite:" + db}, "k1:bad", 1, `key "k1" is not standard base64`},
	} {
		if tc.env != "" {
			t.Setenv("RATCHET_ENCRYPTION_KEYS", tc.env)
		}
		out.Reset()
		errOut.Reset()
		assert.Equal(t, tc.code, run(ctx, tc.args, &out, &errOut), "%v", tc.args)
		assert.Contains(t, errOut.String(), tc.want, "%v", tc.args)
	}
}
