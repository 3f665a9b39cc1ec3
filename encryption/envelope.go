package encryption

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"golang.org/x/crypto/chacha20poly1305"
)

// Algorithm is an AEAD an envelope is sealed with.
type Algorithm byte

// The algorithms. Both take 256-bit keys and 16-byte tags; an envelope
// records its algorithm, so values sealed with either stay readable
// whichever the codec writes with.
const (
	// AES256GCM is AES-256 in GCM mode with a random 96-bit nonce: the
	// fastest where the CPU has AES instructions. Rotate a key well
	// before 2^32 values (NIST's bound for random nonces).
	AES256GCM Algorithm = 1
	// XChaCha20Poly1305 has a random 192-bit nonce, so a key may seal any
	// number of values; fast without AES instructions.
	XChaCha20Poly1305 Algorithm = 2
)

// String names the algorithm.
func (a Algorithm) String() string {
	switch a {
	case AES256GCM:
		return "AES-256-GCM"
	case XChaCha20Poly1305:
		return "XChaCha20-Poly1305"
	}
	return fmt.Sprintf("algorithm(%d)", byte(a))
}

func (a Algorithm) valid() bool { return a == AES256GCM || a == XChaCha20Poly1305 }

func (a Algorithm) aead(key []byte) (cipher.AEAD, error) {
	switch a {
	case AES256GCM:
		b, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		return cipher.NewGCM(b)
	case XChaCha20Poly1305:
		return chacha20poly1305.NewX(key)
	}
	return nil, fmt.Errorf("unknown algorithm %d", byte(a))
}

func (a Algorithm) nonceSize() int {
	if a == XChaCha20Poly1305 {
		return chacha20poly1305.NonceSizeX
	}
	return 12
}

// The envelope, version 1:
//
//	magic "RE" | version 1 | algorithm | binding | key id length n | key id (n bytes) | nonce | ciphertext and tag
//
// binding says what the value is bound to: its job (the job id) or a scope
// (a recurring schedule, a signal delivered by key). The additional
// authenticated data is the header (everything before the nonce), the
// surface and the binding's value, so that a value copied to another job,
// another surface or another scope, or whose header was altered, fails to
// open.
const (
	magic0, magic1 = 'R', 'E'
	version1       = 1
	headerFixed    = 6 // magic, version, algorithm, binding, key id length
	tagSize        = 16
)

// Bindings of an envelope.
const (
	bindJob   byte = 1
	bindScope byte = 2
)

// ErrIntegrity reports a value that does not open: tampered with, copied
// from another job or surface, sealed under another key with the same id,
// or not an envelope at all. The error names neither the plaintext nor the
// key.
var ErrIntegrity = errors.New("encryption: integrity check failed")

// ErrEnvelopeVersion reports an envelope of a version this package does
// not read (written by a newer release). It wraps ErrIntegrity.
var ErrEnvelopeVersion = fmt.Errorf("%w: envelope of an unknown version", ErrIntegrity)

// IsEnvelope reports whether b starts as an envelope of this package does
// (its magic, any version): values written before encryption was turned
// on do not, and are read as they are (see Codec).
func IsEnvelope(b []byte) bool {
	return len(b) >= headerFixed && b[0] == magic0 && b[1] == magic1
}

// Binding is what a value is bound to: its job, or, for a value that is
// not one job's, a scope.
type Binding struct {
	Surface string
	JobID   uuid.UUID
	Scope   string
}

// aad appends the additional authenticated data of header and binding b
// (under kind) to dst.
func aad(dst, header []byte, kind byte, b Binding) []byte {
	dst = append(dst, header...)
	dst = append(dst, b.Surface...)
	dst = append(dst, 0)
	if kind == bindJob {
		return append(dst, b.JobID[:]...)
	}
	return append(dst, b.Scope...)
}

// sealer seals and opens envelopes with a KeyProvider's keys.
type sealer struct {
	keys    KeyProvider
	alg     Algorithm
	ciphers [3]ciphers // by algorithm
}

// seal returns the envelope of plain, bound to b's job (or, with a zero
// job id, to b's scope), under the current key.
func (s *sealer) seal(ctx context.Context, b Binding, plain []byte) ([]byte, error) {
	k, err := s.keys.CurrentKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("encryption: current key: %w", err)
	}
	a, err := s.ciphers[s.alg].get(k)
	if err != nil {
		return nil, err
	}
	kind := bindJob
	if b.JobID == uuid.Nil {
		kind = bindScope
	}
	hlen := headerFixed + len(k.ID)
	ns := a.NonceSize()
	// One allocation: the envelope, and after it the additional data
	// (which Seal does not write over).
	size := hlen + ns + len(plain) + a.Overhead()
	buf := make([]byte, hlen+ns, size+aadSize(hlen, kind, b))
	buf[0], buf[1], buf[2], buf[3], buf[4], buf[5] = magic0, magic1, version1, byte(s.alg), kind, byte(len(k.ID))
	copy(buf[headerFixed:], k.ID)
	if _, err := rand.Read(buf[hlen : hlen+ns]); err != nil {
		return nil, fmt.Errorf("encryption: nonce: %w", err)
	}
	ad := aad(buf[size:size], buf[:hlen], kind, b)
	out := a.Seal(buf, buf[hlen:hlen+ns], plain, ad)
	return out[:len(out):len(out)], nil
}

// aadSize is the size of the additional data of a header of hlen bytes
// and binding b under kind.
func aadSize(hlen int, kind byte, b Binding) int {
	n := hlen + len(b.Surface) + 1
	if kind == bindJob {
		return n + len(b.JobID)
	}
	return n + len(b.Scope)
}

// open returns the plaintext of envelope env, bound to b as the envelope
// says (its job, or its scope).
func (s *sealer) open(ctx context.Context, b Binding, env []byte) ([]byte, error) {
	if !IsEnvelope(env) {
		return nil, fmt.Errorf("%w: not an envelope", ErrIntegrity)
	}
	if env[2] != version1 {
		return nil, fmt.Errorf("%w %d (this release reads version %d)", ErrEnvelopeVersion, env[2], version1)
	}
	alg, kind, n := Algorithm(env[3]), env[4], int(env[5])
	if !alg.valid() || (kind != bindJob && kind != bindScope) || n == 0 {
		return nil, fmt.Errorf("%w: malformed envelope header", ErrIntegrity)
	}
	hlen := headerFixed + n
	if len(env) < hlen+alg.nonceSize()+tagSize {
		return nil, fmt.Errorf("%w: envelope of %d bytes is too short", ErrIntegrity, len(env))
	}
	id := env[headerFixed:hlen]
	a := s.ciphers[alg].cached(id)
	if a == nil {
		k, err := s.keys.KeyByID(ctx, string(id))
		if err != nil {
			return nil, fmt.Errorf("encryption: key %q of the envelope: %w", id, err)
		}
		if a, err = s.ciphers[alg].get(k); err != nil {
			return nil, err
		}
	}
	ns := a.NonceSize()
	if kind == bindJob && b.JobID == uuid.Nil {
		return nil, fmt.Errorf("%w: the value is bound to a job, and is read as no job's", ErrIntegrity)
	}
	// One allocation: the plaintext, and after it the additional data.
	body := env[hlen+ns:]
	size := len(body) - a.Overhead()
	buf := make([]byte, 0, size+aadSize(hlen, kind, b))
	ad := aad(buf[size:size], env[:hlen], kind, b)
	plain, err := a.Open(buf, env[hlen:hlen+ns], body, ad)
	if err != nil {
		return nil, fmt.Errorf("%w (%s surface, key %q)", ErrIntegrity, b.Surface, id)
	}
	return plain[:len(plain):len(plain)], nil
}
