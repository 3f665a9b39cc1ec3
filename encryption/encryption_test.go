package encryption_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/encryption"
)

func secret(b byte) []byte { return bytes.Repeat([]byte{b}, encryption.KeySize) }

func codec(t testing.TB, current string, o encryption.Options, keys map[string][]byte) *encryption.Codec {
	t.Helper()
	kp, err := encryption.NewStaticKeys(current, keys)
	require.NoError(t, err)
	c, err := encryption.NewCodec(kp, o)
	require.NoError(t, err)
	return c
}

var (
	jobA = uuid.MustParse("01939000-0000-7000-8000-00000000000a")
	jobB = uuid.MustParse("01939000-0000-7000-8000-00000000000b")
	ctx  = context.Background()
)

func TestSealOpenRoundTrip(t *testing.T) {
	for _, alg := range []encryption.Algorithm{encryption.AES256GCM, encryption.XChaCha20Poly1305} {
		t.Run(alg.String(), func(t *testing.T) {
			c := codec(t, "k1", encryption.Options{Algorithm: alg}, map[string][]byte{"k1": secret(1)})
			b := encryption.Binding{Surface: "task", JobID: jobA}
			plain := []byte(`{"card":"4111"}`)
			env, err := c.Seal(ctx, b, plain)
			require.NoError(t, err)
			assert.True(t, encryption.IsEnvelope(env))
			assert.NotContains(t, string(env), "4111", "the plaintext does not show")
			id, ok := encryption.KeyID(env)
			assert.True(t, ok)
			assert.Equal(t, "k1", id)
			got, err := c.Open(ctx, b, env)
			require.NoError(t, err)
			assert.Equal(t, plain, got)
			again, err := c.Seal(ctx, b, plain)
			require.NoError(t, err)
			assert.NotEqual(t, env, again, "a fresh nonce per value")

			empty, err := c.Seal(ctx, b, nil)
			require.NoError(t, err)
			got, err = c.Open(ctx, b, empty)
			require.NoError(t, err)
			assert.Empty(t, got)
		})
	}
}

// Every way a value can be moved or altered fails with ErrIntegrity (or
// ErrUnknownKey), and the error shows no plaintext.
func TestTamperedValuesFail(t *testing.T) {
	keys := map[string][]byte{"k1": secret(1), "k2": secret(2)}
	c := codec(t, "k1", encryption.Options{}, keys)
	b := encryption.Binding{Surface: "task", JobID: jobA}
	plain := []byte("secret-payload")
	env, err := c.Seal(ctx, b, plain)
	require.NoError(t, err)
	flip := func(i int) []byte {
		x := bytes.Clone(env)
		x[i] ^= 0x01
		return x
	}
	sameIDOtherSecret := codec(t, "k1", encryption.Options{}, map[string][]byte{"k1": secret(9)})
	unknown := codec(t, "k2", encryption.Options{}, map[string][]byte{"k2": secret(2)})
	for name, tc := range map[string]struct {
		c     *encryption.Codec
		b     encryption.Binding
		value []byte
		want  error
	}{
		"another job's value":          {c, encryption.Binding{Surface: "task", JobID: jobB}, env, encryption.ErrIntegrity},
		"the payload read as result":   {c, encryption.Binding{Surface: "result", JobID: jobA}, env, encryption.ErrIntegrity},
		"a flipped bit in the body":    {c, b, flip(len(env) - 1), encryption.ErrIntegrity},
		"a flipped bit in the nonce":   {c, b, flip(9), encryption.ErrIntegrity},
		"the algorithm byte changed":   {c, b, flip(3), encryption.ErrIntegrity},
		"the binding byte changed":     {c, b, flip(4), encryption.ErrIntegrity},
		"a truncated envelope":         {c, b, env[:10], encryption.ErrIntegrity},
		"a wrong key with the same id": {sameIDOtherSecret, b, env, encryption.ErrIntegrity},
		"an unknown key id":            {unknown, b, env, encryption.ErrUnknownKey},
		"read as no job's value":       {c, encryption.Binding{Surface: "task"}, env, encryption.ErrIntegrity},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := tc.c.Open(ctx, tc.b, tc.value)
			require.ErrorIs(t, err, tc.want)
			assert.Nil(t, got)
			assert.NotContains(t, err.Error(), string(plain))
		})
	}
	// The key id byte changed names another key: k2 opens nothing of k1's.
	other := bytes.Clone(env)
	other[7] = '2' // "k1" -> "k2"
	_, err = c.Open(ctx, b, other)
	assert.ErrorIs(t, err, encryption.ErrIntegrity)
}

// A value of no one job is bound to its scope: another scope does not
// open it, any job reading it under the same scope does.
func TestScopeBinding(t *testing.T) {
	c := codec(t, "k1", encryption.Options{}, map[string][]byte{"k1": secret(1)})
	env, err := c.Seal(ctx, encryption.Binding{Surface: "signal", Scope: "approval\x00customer-42"}, []byte("yes"))
	require.NoError(t, err)
	got, err := c.Open(ctx, encryption.Binding{Surface: "signal", JobID: jobA, Scope: "approval\x00customer-42"}, env)
	require.NoError(t, err)
	assert.Equal(t, []byte("yes"), got)
	_, err = c.Open(ctx, encryption.Binding{Surface: "signal", JobID: jobA, Scope: "approval\x00customer-43"}, env)
	assert.ErrorIs(t, err, encryption.ErrIntegrity)
}

// New values are sealed under the current key; values of older keys still
// open; plaintext opens as it is unless RequireEnvelope.
func TestRotationAndPlaintext(t *testing.T) {
	b := encryption.Binding{Surface: "task", JobID: jobA}
	old := codec(t, "2026-01", encryption.Options{Algorithm: encryption.XChaCha20Poly1305}, map[string][]byte{"2026-01": secret(1)})
	env, err := old.Seal(ctx, b, []byte("v1"))
	require.NoError(t, err)

	rotated := codec(t, "2026-06", encryption.Options{}, map[string][]byte{"2026-01": secret(1), "2026-06": secret(2)})
	got, err := rotated.Open(ctx, b, env)
	require.NoError(t, err, "a value of the old key, and the old algorithm")
	assert.Equal(t, []byte("v1"), got)
	fresh, err := rotated.Seal(ctx, b, []byte("v2"))
	require.NoError(t, err)
	id, _ := encryption.KeyID(fresh)
	assert.Equal(t, "2026-06", id)

	got, err = rotated.Open(ctx, b, []byte(`{"plain":true}`))
	require.NoError(t, err)
	assert.Equal(t, []byte(`{"plain":true}`), got, "a row written before encryption reads as it is")
	strict := codec(t, "2026-06", encryption.Options{RequireEnvelope: true}, map[string][]byte{"2026-06": secret(2)})
	_, err = strict.Open(ctx, b, []byte(`{"plain":true}`))
	assert.ErrorIs(t, err, encryption.ErrIntegrity)
	_, ok := encryption.KeyID([]byte("plain"))
	assert.False(t, ok)
}

func TestBadKeys(t *testing.T) {
	for name, tc := range map[string]struct {
		current string
		keys    map[string][]byte
		want    string
	}{
		"a short key":       {"k", map[string][]byte{"k": secret(1)[:16]}, `key "k" is 16 bytes`},
		"an empty id":       {"", map[string][]byte{"": secret(1)}, "empty id"},
		"a missing current": {"k2", map[string][]byte{"k1": secret(1)}, `current key "k2" is not among`},
		"a 256-byte key id": {string(bytes.Repeat([]byte("x"), 256)), map[string][]byte{string(bytes.Repeat([]byte("x"), 256)): secret(1)}, "over the limit of 255"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := encryption.NewStaticKeys(tc.current, tc.keys)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	_, err := encryption.NewCodec(nil, encryption.Options{})
	assert.Error(t, err)
	kp, err := encryption.NewStaticKeys("k", map[string][]byte{"k": secret(1)})
	require.NoError(t, err)
	_, err = encryption.NewCodec(kp, encryption.Options{Algorithm: 7})
	assert.ErrorContains(t, err, "unknown algorithm 7")
}

// Seal and Open of a 1 KiB payload: the bound is 5 µs and 4
// allocations for the pair.
func BenchmarkSealOpen1KiB(b *testing.B) {
	for _, alg := range []encryption.Algorithm{encryption.AES256GCM, encryption.XChaCha20Poly1305} {
		b.Run(alg.String(), func(b *testing.B) {
			c := codec(b, "k1", encryption.Options{Algorithm: alg}, map[string][]byte{"k1": secret(1)})
			bind := encryption.Binding{Surface: "task", JobID: jobA}
			plain := bytes.Repeat([]byte("x"), 1024)
			b.ReportAllocs()
			b.SetBytes(1024)
			for b.Loop() {
				env, err := c.Seal(ctx, bind, plain)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Open(ctx, bind, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
