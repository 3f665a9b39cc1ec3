package encryption

import (
	"context"
	"crypto/cipher"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// KeySize is the size of every data key: 256 bits, for AES-256-GCM and
// XChaCha20-Poly1305 alike.
const KeySize = 32

// MaxKeyIDBytes is the longest key id an envelope records.
const MaxKeyIDBytes = 255

// ErrUnknownKey reports a key id that the KeyProvider does not hold: a
// value written under a key that was removed, or a corrupted envelope.
var ErrUnknownKey = errors.New("encryption: unknown key id")

// Key is a data key and the id its envelopes record. A key id names one
// secret for ever: rotating means a new id, never new bytes under an old
// one.
type Key struct {
	ID     string
	Secret []byte // KeySize bytes
}

// KeyProvider gives the codec its keys: the current one, which new values
// are written under, and any by id, for the values written before a
// rotation. Implementations must be safe for concurrent use; the codec
// asks for a key id once and caches its cipher.
type KeyProvider interface {
	CurrentKey(ctx context.Context) (Key, error)
	KeyByID(ctx context.Context, id string) (Key, error)
}

// checkKey reports what makes k unusable.
func checkKey(k Key) error {
	switch {
	case k.ID == "":
		return errors.New("encryption: a key with an empty id")
	case len(k.ID) > MaxKeyIDBytes:
		return fmt.Errorf("encryption: key id %.20q... is %d bytes, over the limit of %d", k.ID, len(k.ID), MaxKeyIDBytes)
	case len(k.Secret) != KeySize:
		return fmt.Errorf("encryption: key %q is %d bytes; a key is %d bytes (256 bits)", k.ID, len(k.Secret), KeySize)
	}
	return nil
}

// StaticKeys is a KeyProvider over keys held in memory: the current key
// and the older ones still readable. Build it with NewStaticKeys.
type StaticKeys struct {
	current string
	keys    map[string][]byte
}

// NewStaticKeys returns the provider of keys (id to 32-byte secret) whose
// current key is current. Every key must be 32 bytes and its id 1 to 255
// bytes; the secrets are copied.
func NewStaticKeys(current string, keys map[string][]byte) (*StaticKeys, error) {
	s := &StaticKeys{current: current, keys: make(map[string][]byte, len(keys))}
	for _, id := range slices.Sorted(maps.Keys(keys)) {
		if err := checkKey(Key{ID: id, Secret: keys[id]}); err != nil {
			return nil, err
		}
		s.keys[id] = slices.Clone(keys[id])
	}
	if _, ok := s.keys[current]; !ok {
		return nil, fmt.Errorf("encryption: the current key %q is not among the %d keys given", current, len(keys))
	}
	return s, nil
}

// CurrentKey implements KeyProvider.
func (s *StaticKeys) CurrentKey(context.Context) (Key, error) {
	return Key{ID: s.current, Secret: s.keys[s.current]}, nil
}

// KeyByID implements KeyProvider.
func (s *StaticKeys) KeyByID(_ context.Context, id string) (Key, error) {
	k, ok := s.keys[id]
	if !ok {
		return Key{}, fmt.Errorf("%w %q", ErrUnknownKey, id)
	}
	return Key{ID: id, Secret: k}, nil
}

// ciphers caches the AEAD of each key id, for one algorithm.
type ciphers struct {
	alg  Algorithm
	mu   sync.RWMutex
	byID map[string]cipher.AEAD
}

// get returns the AEAD of key k, building it on first use.
func (c *ciphers) get(k Key) (cipher.AEAD, error) {
	c.mu.RLock()
	a := c.byID[k.ID]
	c.mu.RUnlock()
	if a != nil {
		return a, nil
	}
	if err := checkKey(k); err != nil {
		return nil, err
	}
	a, err := c.alg.aead(k.Secret)
	if err != nil {
		return nil, fmt.Errorf("encryption: key %q: %w", k.ID, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[string]cipher.AEAD{}
	}
	if prev := c.byID[k.ID]; prev != nil {
		return prev, nil
	}
	c.byID[k.ID] = a
	return a, nil
}

// cached returns the AEAD of key id if it was built.
func (c *ciphers) cached(id []byte) cipher.AEAD {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byID[string(id)]
}
