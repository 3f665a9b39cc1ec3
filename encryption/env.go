package encryption

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
)

// The environment variables of EnvKeys. Every RATCHET_* setting is in the
// engine's FromEnv table; FromEnv leaves these to EnvKeys.
const (
	// EnvKeysVar lists the keys: id:base64,id:base64 (standard base64 of
	// 32 bytes each).
	EnvKeysVar = "RATCHET_ENCRYPTION_KEYS"
	// EnvCurrentKeyVar names the current key; empty means the last one
	// listed.
	EnvCurrentKeyVar = "RATCHET_ENCRYPTION_CURRENT_KEY"
)

// EnvKeys returns the provider of the keys in the process's environment
// (see EnvKeysVar, EnvCurrentKeyVar).
func EnvKeys() (*StaticKeys, error) { return LookupEnvKeys(os.Environ()) }

// LookupEnvKeys is EnvKeys over environ (KEY=value entries). Errors name
// the variable and the key id, never a secret.
func LookupEnvKeys(environ []string) (*StaticKeys, error) {
	var list, current string
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		switch name {
		case EnvKeysVar:
			list = val
		case EnvCurrentKeyVar:
			current = strings.TrimSpace(val)
		}
	}
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("encryption: %s is not set (id:base64 of 32 bytes, comma-separated)", EnvKeysVar)
	}
	keys := map[string][]byte{}
	last := ""
	for i, entry := range strings.Split(list, ",") {
		id, enc, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok || id == "" {
			return nil, fmt.Errorf("encryption: %s: entry %d is not id:base64", EnvKeysVar, i+1)
		}
		if _, dup := keys[id]; dup {
			return nil, fmt.Errorf("encryption: %s: key %q is listed twice", EnvKeysVar, id)
		}
		secret, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
		if err != nil {
			return nil, fmt.Errorf("encryption: %s: key %q is not standard base64", EnvKeysVar, id)
		}
		keys[id], last = secret, id
	}
	if current == "" {
		current = last
	}
	s, err := NewStaticKeys(current, keys)
	if err != nil {
		return nil, fmt.Errorf("%w (from %s and %s)", err, EnvKeysVar, EnvCurrentKeyVar)
	}
	return s, nil
}
