package encryption_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/encryption"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestEnvKeys(t *testing.T) {
	b64 := func(b byte) string { return base64.StdEncoding.EncodeToString(secret(b)) }
	kp, err := encryption.LookupEnvKeys([]string{"RATCHET_ENCRYPTION_KEYS=old:" + b64(1) + ", new:" + b64(2)})
	require.NoError(t, err)
	k, err := kp.CurrentKey(ctx)
	require.NoError(t, err)
	assert.Equal(t, "new", k.ID, "the last one listed is current by default")
	kp, err = encryption.LookupEnvKeys([]string{"RATCHET_ENCRYPTION_KEYS=old:" + b64(1) + ",new:" + b64(2), "RATCHET_ENCRYPTION_CURRENT_KEY=old"})
	require.NoError(t, err)
	k, _ = kp.CurrentKey(ctx)
	assert.Equal(t, "old", k.ID)

	for env, want := range map[string]string{
		"":                             "RATCHET_ENCRYPTION_KEYS is not set",
		"a":                            "entry 1 is not id:base64",
		"a:%%%":                        `key "a" is not standard base64`,
		"a:" + b64(1) + ",a:" + b64(2): `key "a" is listed twice`,
		"a:" + base64.StdEncoding.EncodeToString([]byte("short")): `key "a" is 5 bytes`,
	} {
		_, err := encryption.LookupEnvKeys([]string{"RATCHET_ENCRYPTION_KEYS=" + env})
		require.ErrorContains(t, err, want, env)
		assert.NotContains(t, err.Error(), b64(1), "no secret in the error")
	}
	_, err = encryption.LookupEnvKeys([]string{"RATCHET_ENCRYPTION_KEYS=a:" + b64(1), "RATCHET_ENCRYPTION_CURRENT_KEY=b"})
	assert.ErrorContains(t, err, `current key "b" is not among`)
}

func TestWrappedKeys(t *testing.T) {
	w, err := encryption.NewLocalWrapper(secret(7))
	require.NoError(t, err)
	k1, err := encryption.NewDataKey(ctx, w, "k1")
	require.NoError(t, err)
	k2, err := encryption.NewDataKey(ctx, w, "k2")
	require.NoError(t, err)
	kp, err := encryption.NewWrappedKeys(w, "k2", map[string][]byte{"k1": k1, "k2": k2})
	require.NoError(t, err)
	c, err := encryption.NewCodec(kp, encryption.Options{})
	require.NoError(t, err)
	b := encryption.Binding{Surface: "task", JobID: jobA}
	env, err := c.Seal(ctx, b, []byte("x"))
	require.NoError(t, err)
	got, err := c.Open(ctx, b, env)
	require.NoError(t, err)
	assert.Equal(t, []byte("x"), got)

	other, err := encryption.NewLocalWrapper(secret(8))
	require.NoError(t, err)
	bad, err := encryption.NewWrappedKeys(other, "k2", map[string][]byte{"k2": k2})
	require.NoError(t, err)
	_, err = bad.CurrentKey(ctx)
	assert.ErrorIs(t, err, encryption.ErrIntegrity, "another master key")
	renamed, err := encryption.NewWrappedKeys(w, "k3", map[string][]byte{"k3": k2})
	require.NoError(t, err)
	_, err = renamed.CurrentKey(ctx)
	assert.ErrorIs(t, err, encryption.ErrIntegrity, "a wrapped key under another id")
	_, err = kp.KeyByID(ctx, "nope")
	assert.ErrorIs(t, err, encryption.ErrUnknownKey)
}

type countingMetrics struct {
	spi.NoOpMetrics
	violations, skews int
	surface           string
}

func (m *countingMetrics) EncryptionIntegrityViolation(_ context.Context, _ uuid.UUID, surface string) {
	m.violations++
	m.surface = surface
}

func (m *countingMetrics) EncryptionEnvelopeVersionSkew(_ context.Context, _ uuid.UUID, found, supported int) {
	m.skews++
}

// An integrity failure and an envelope of another version reach the
// metrics; an envelope of version 2 is not read as plaintext.
func TestEncryptionMetrics(t *testing.T) {
	m := &countingMetrics{}
	kp, err := encryption.NewStaticKeys("k", map[string][]byte{"k": secret(1)})
	require.NoError(t, err)
	c, err := encryption.NewCodec(kp, encryption.Options{Metrics: m})
	require.NoError(t, err)
	b := encryption.Binding{Surface: "result", JobID: jobA}
	env, err := c.Seal(ctx, b, []byte("x"))
	require.NoError(t, err)
	_, err = c.Open(ctx, encryption.Binding{Surface: "result", JobID: jobB}, env)
	require.ErrorIs(t, err, encryption.ErrIntegrity)
	assert.Equal(t, 1, m.violations)
	assert.Equal(t, "result", m.surface)
	env[2] = 2
	_, err = c.Open(ctx, b, env)
	assert.True(t, errors.Is(err, encryption.ErrEnvelopeVersion), "%v", err)
	assert.Equal(t, 1, m.skews)
}
