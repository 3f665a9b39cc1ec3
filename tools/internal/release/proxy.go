package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// BuildProxy writes into dir a file-based module proxy that serves every
// module of tree (a copy of the workspace whose go.mod files are the ones
// to publish) at version, published at when: for each module,
// <escaped path>/@v/list, version.info, version.mod and version.zip. A go
// command reads it through GOPROXY=file://dir (see ProxyEnv).
func BuildProxy(tree string, mods []Module, version string, when time.Time, dir string) error {
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, when.UTC()})
	if err != nil {
		return err
	}
	for _, m := range mods {
		escaped, err := module.EscapePath(m.Path)
		if err != nil {
			return fmt.Errorf("release: %w", err)
		}
		ev, err := module.EscapeVersion(version)
		if err != nil {
			return fmt.Errorf("release: %w", err)
		}
		at := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
		if err := os.MkdirAll(at, 0o755); err != nil {
			return err
		}
		src := filepath.Join(tree, filepath.FromSlash(m.Dir))
		mod, err := os.ReadFile(filepath.Join(src, "go.mod"))
		if err != nil {
			return fmt.Errorf("release: %w", err)
		}
		z, err := os.Create(filepath.Join(at, ev+".zip"))
		if err != nil {
			return err
		}
		err = modzip.CreateFromDir(z, module.Version{Path: m.Path, Version: version}, src)
		if cerr := z.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("release: zip of %s: %w", m.Path, err)
		}
		if err := os.WriteFile(filepath.Join(at, ev+".mod"), mod, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(at, ev+".info"), info, 0o644); err != nil {
			return err
		}
		if err := addToList(filepath.Join(at, "list"), version); err != nil {
			return err
		}
	}
	return nil
}

func addToList(name, version string) error {
	data, err := os.ReadFile(name)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	versions := strings.Fields(string(data))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	return os.WriteFile(name, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}

// ProxyEnv returns the environment (os.Environ with its changes) under
// which a go command outside any workspace takes the modules of mods from
// the file proxy at proxyDir and every other module from this machine's
// module cache or, failing that, the upstream proxy. Downloads land in
// modCache, a module cache of its own, so that nothing of a trial release
// is left in the machine's; -trimpath keeps the build cache shared with
// builds from the machine's module cache all the same.
func ProxyEnv(proxyDir, modCache string, mods []Module) ([]string, error) {
	goenv := func(name string) (string, error) {
		out, err := exec.Command("go", "env", name).Output()
		return strings.TrimSpace(string(out)), err
	}
	cache, err := goenv("GOMODCACHE")
	if err != nil {
		return nil, fmt.Errorf("release: go env GOMODCACHE: %w", err)
	}
	upstream, err := goenv("GOPROXY")
	if err != nil {
		return nil, fmt.Errorf("release: go env GOPROXY: %w", err)
	}
	flags, err := goenv("GOFLAGS")
	if err != nil {
		return nil, fmt.Errorf("release: go env GOFLAGS: %w", err)
	}
	proxies := []string{fileURL(proxyDir)}
	if cache != "" && cache != modCache {
		proxies = append(proxies, fileURL(filepath.Join(cache, "cache", "download")))
	}
	if upstream != "" && upstream != "off" {
		proxies = append(proxies, upstream)
	}
	var private []string
	for _, m := range mods {
		private = append(private, m.Path)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GOWORK", "GOPROXY", "GOMODCACHE", "GONOSUMDB", "GOFLAGS", "GOTOOLCHAIN", "GOPRIVATE", "GONOPROXY":
			return true
		}
		return false
	})
	return append(env,
		"GOWORK=off",
		"GOTOOLCHAIN=local",
		"GOPROXY="+strings.Join(proxies, ","),
		"GOMODCACHE="+modCache,
		// The modules of a trial release are in no checksum database.
		"GONOSUMDB="+strings.Join(private, ","),
		"GOFLAGS="+strings.TrimSpace(flags+" -modcacherw -trimpath"),
	), nil
}

func fileURL(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return "file://" + filepath.ToSlash(abs)
}

// goCmd runs the go command in dir under env, returning its combined
// output in the error when it fails.
func goCmd(dir string, env []string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), dir, err, out.Bytes())
	}
	return nil
}
