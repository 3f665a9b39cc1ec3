package encryption

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// KeyWrapper wraps data keys with a master key kept elsewhere (a KMS: AWS
// KMS, GCP KMS, Vault's transit engine) and unwraps them: the seam for the
// spec's WrappedKeyProvider. id is the data key's id, which a wrapper may
// bind the wrapped bytes to. Implementations must be safe for concurrent
// use.
type KeyWrapper interface {
	Wrap(ctx context.Context, id string, dataKey []byte) ([]byte, error)
	Unwrap(ctx context.Context, id string, wrapped []byte) ([]byte, error)
}

// WrappedKeys is a KeyProvider over data keys kept wrapped (in a
// configuration file, a secret store): each is unwrapped by the
// KeyWrapper on first use and cached in memory. It is the spec's
// WrappedKeyProvider. Build it with NewWrappedKeys.
type WrappedKeys struct {
	w       KeyWrapper
	current string
	wrapped map[string][]byte
	mu      sync.Mutex
	plain   map[string][]byte
}

// NewWrappedKeys returns the provider of the wrapped data keys (id to
// wrapped bytes) whose current key is current.
func NewWrappedKeys(w KeyWrapper, current string, wrapped map[string][]byte) (*WrappedKeys, error) {
	if w == nil {
		return nil, errors.New("encryption: nil KeyWrapper")
	}
	if _, ok := wrapped[current]; !ok {
		return nil, fmt.Errorf("encryption: the current key %q is not among the %d wrapped keys given", current, len(wrapped))
	}
	k := &WrappedKeys{w: w, current: current, wrapped: make(map[string][]byte, len(wrapped)), plain: map[string][]byte{}}
	for _, id := range slices.Sorted(maps.Keys(wrapped)) {
		if err := checkKey(Key{ID: id, Secret: make([]byte, KeySize)}); err != nil {
			return nil, err
		}
		k.wrapped[id] = slices.Clone(wrapped[id])
	}
	return k, nil
}

// CurrentKey implements KeyProvider.
func (k *WrappedKeys) CurrentKey(ctx context.Context) (Key, error) { return k.KeyByID(ctx, k.current) }

// KeyByID implements KeyProvider: the data key unwrapped (once).
func (k *WrappedKeys) KeyByID(ctx context.Context, id string) (Key, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if p, ok := k.plain[id]; ok {
		return Key{ID: id, Secret: p}, nil
	}
	w, ok := k.wrapped[id]
	if !ok {
		return Key{}, fmt.Errorf("%w %q", ErrUnknownKey, id)
	}
	p, err := k.w.Unwrap(ctx, id, w)
	if err != nil {
		return Key{}, fmt.Errorf("encryption: unwrap key %q: %w", id, err)
	}
	if err := checkKey(Key{ID: id, Secret: p}); err != nil {
		return Key{}, err
	}
	k.plain[id] = p
	return Key{ID: id, Secret: p}, nil
}

// NewDataKey makes a random data key and returns it wrapped by w, to be
// kept (under id) beside the other wrapped keys.
func NewDataKey(ctx context.Context, w KeyWrapper, id string) ([]byte, error) {
	secret := make([]byte, KeySize)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("encryption: new data key: %w", err)
	}
	wrapped, err := w.Wrap(ctx, id, secret)
	clear(secret)
	if err != nil {
		return nil, fmt.Errorf("encryption: wrap key %q: %w", id, err)
	}
	return wrapped, nil
}

// LocalWrapper is a KeyWrapper with a master key in memory: AES-256-GCM,
// the data key's id as additional data (a wrapped key renamed does not
// unwrap). It stands in for a KMS in tests and on a single host.
type LocalWrapper struct{ aead cipher.AEAD }

// NewLocalWrapper returns the wrapper of a 32-byte master key.
func NewLocalWrapper(master []byte) (*LocalWrapper, error) {
	if len(master) != KeySize {
		return nil, fmt.Errorf("encryption: the master key is %d bytes; it is %d", len(master), KeySize)
	}
	b, err := aes.NewCipher(master)
	if err != nil {
		return nil, err
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		return nil, err
	}
	return &LocalWrapper{aead: a}, nil
}

// Wrap implements KeyWrapper.
func (l *LocalWrapper) Wrap(_ context.Context, id string, dataKey []byte) ([]byte, error) {
	nonce := make([]byte, l.aead.NonceSize(), l.aead.NonceSize()+len(dataKey)+l.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return l.aead.Seal(nonce, nonce, dataKey, []byte(id)), nil
}

// Unwrap implements KeyWrapper.
func (l *LocalWrapper) Unwrap(_ context.Context, id string, wrapped []byte) ([]byte, error) {
	n := l.aead.NonceSize()
	if len(wrapped) < n+l.aead.Overhead() {
		return nil, fmt.Errorf("%w: wrapped key of %d bytes is too short", ErrIntegrity, len(wrapped))
	}
	p, err := l.aead.Open(nil, wrapped[:n], wrapped[n:], []byte(id))
	if err != nil {
		return nil, fmt.Errorf("%w: wrapped key %q does not unwrap under this master key", ErrIntegrity, id)
	}
	return p, nil
}
