package encryption

import (
	"context"
	"errors"
	"fmt"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Options configure a Codec. The zero value writes AES-256-GCM and reads
// plaintext values as they are.
type Options struct {
	// Algorithm is what new values are sealed with; zero means
	// AES256GCM. Values sealed with the other stay readable.
	Algorithm Algorithm
	// RequireEnvelope refuses, with ErrIntegrity, a stored value that is
	// not an envelope. Off, such a value is read as it is: encryption can
	// be turned on over a database that holds plaintext rows, and each
	// row is sealed when next written (or by a re-encryption pass). Turn
	// it on once no plaintext row is left, so that a plaintext value
	// planted in a row is refused too.
	RequireEnvelope bool
	// Metrics, when it implements spi.EncryptionMetrics, hears of every
	// value that fails its integrity check, and of every envelope of an
	// unknown version (pass the engine's Options.Client.Metrics); nil reports
	// nothing.
	Metrics spi.MetricsCollector
}

// Codec seals values into envelopes and opens them, with the keys of a
// KeyProvider. It is safe for concurrent use.
type Codec struct {
	s       sealer
	require bool
	metrics spi.EncryptionMetrics // nil: none
}

// NewCodec returns the codec of keys.
func NewCodec(keys KeyProvider, o Options) (*Codec, error) {
	if keys == nil {
		return nil, fmt.Errorf("encryption: nil KeyProvider")
	}
	alg := o.Algorithm
	if alg == 0 {
		alg = AES256GCM
	}
	if !alg.valid() {
		return nil, fmt.Errorf("encryption: unknown algorithm %d", byte(alg))
	}
	c := &Codec{s: sealer{keys: keys, alg: alg}, require: o.RequireEnvelope}
	if m, ok := o.Metrics.(spi.EncryptionMetrics); ok {
		c.metrics = m
	}
	for _, a := range []Algorithm{AES256GCM, XChaCha20Poly1305} {
		c.s.ciphers[a].alg = a
	}
	return c, nil
}

// Seal returns the envelope of plain under the current key, bound to b:
// to b.JobID, or, when it is zero, to b.Scope; and to b.Surface.
func (c *Codec) Seal(ctx context.Context, b Binding, plain []byte) ([]byte, error) {
	return c.s.seal(ctx, b, plain)
}

// Open returns the plaintext of a value Seal returned for the same
// binding (the job, or the scope, as the envelope says). A value that was
// tampered with, copied elsewhere or sealed under another secret fails
// with an error wrapping ErrIntegrity; one whose key the provider lacks,
// ErrUnknownKey. A value that is no envelope is returned as it is, unless
// Options.RequireEnvelope.
func (c *Codec) Open(ctx context.Context, b Binding, stored []byte) ([]byte, error) {
	if !IsEnvelope(stored) && !c.require {
		return stored, nil
	}
	plain, err := c.s.open(ctx, b, stored)
	if err != nil && c.metrics != nil {
		switch {
		case errors.Is(err, ErrEnvelopeVersion):
			c.metrics.EncryptionEnvelopeVersionSkew(ctx, b.JobID, int(stored[2]), version1)
		case errors.Is(err, ErrIntegrity):
			c.metrics.EncryptionIntegrityViolation(ctx, b.JobID, b.Surface)
		}
	}
	return plain, err
}

// KeyID returns the id of the key value was sealed under, and false for a
// value that is no envelope: what a re-encryption pass looks at.
func KeyID(value []byte) (string, bool) {
	if !IsEnvelope(value) || value[2] != version1 || len(value) < headerFixed+int(value[5]) {
		return "", false
	}
	return string(value[headerFixed : headerFixed+int(value[5])]), true
}

// Encode implements ratchet.PayloadCodec: the value is sealed under the
// current key, bound to ref's stored surface and to its job (or, for a
// value of no one job, its scope).
func (c *Codec) Encode(ctx context.Context, ref ratchet.PayloadRef, data []byte) ([]byte, error) {
	return c.Seal(ctx, binding(ref), data)
}

// Decode implements ratchet.PayloadCodec (see Open).
func (c *Codec) Decode(ctx context.Context, ref ratchet.PayloadRef, data []byte) ([]byte, error) {
	return c.Open(ctx, binding(ref), data)
}

// binding is the binding of the value ref names.
func binding(ref ratchet.PayloadRef) Binding {
	return Binding{Surface: string(ref.Surface.Stored()), JobID: ref.JobID, Scope: ref.Scope}
}

var _ ratchet.PayloadCodec = (*Codec)(nil)
