package encryption_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/encryption"
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// FuzzOpen: any stored bytes either open (a plaintext value, since the
// codec reads values written before encryption was on, or an envelope
// that opens under its key and binding) or fail with ErrIntegrity or
// ErrUnknownKey, never a panic; with RequireEnvelope, what opens was
// sealed. A value sealed for one job never opens for another.
func FuzzOpen(f *testing.F) {
	keys, err := encryption.NewStaticKeys("k2", map[string][]byte{"k1": bytes.Repeat([]byte{1}, 32), "k2": bytes.Repeat([]byte{2}, 32)})
	if err != nil {
		f.Fatal(err)
	}
	lax, err := encryption.NewCodec(keys, encryption.Options{})
	if err != nil {
		f.Fatal(err)
	}
	strict, err := encryption.NewCodec(keys, encryption.Options{RequireEnvelope: true, Algorithm: encryption.XChaCha20Poly1305})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	job, other := uuid.MustParse("01a24a71-472f-7000-a588-aa16e2db11fb"), uuid.MustParse("01a24a71-472f-7000-a588-aa16e2db11fc")
	ref := ratchet.JobRef(ratchet.SurfaceTask, job)
	for _, c := range []*encryption.Codec{lax, strict} {
		for _, plain := range [][]byte{[]byte(`{"to":"ann@example.com"}`), {}, bytes.Repeat([]byte("x"), 1000)} {
			sealed, err := c.Encode(ctx, ref, plain)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(sealed)
			f.Add(sealed[:len(sealed)/2])
			flipped := bytes.Clone(sealed)
			flipped[len(flipped)-1] ^= 1
			f.Add(flipped)
		}
	}
	f.Add([]byte(`{"plain":true}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, stored []byte) {
		for _, c := range []*encryption.Codec{lax, strict} {
			plain, err := c.Decode(ctx, ref, stored)
			if err != nil {
				if !errors.Is(err, encryption.ErrIntegrity) && !errors.Is(err, encryption.ErrUnknownKey) {
					t.Fatalf("Decode(%x): %v is neither ErrIntegrity nor ErrUnknownKey", stored, err)
				}
				continue
			}
			if c == strict || !bytes.Equal(plain, stored) { // it was an envelope: bound to this job only
				if _, err := c.Decode(ctx, ratchet.JobRef(ratchet.SurfaceTask, other), stored); err == nil {
					t.Fatalf("Decode(%x) opened for another job too", stored)
				}
			}
		}
	})
}
