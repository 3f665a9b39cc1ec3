package release

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// Verify builds every module of mods as a user's go command gets it: its
// zip from the proxy at proxyDir extracted into a folder of work, its
// replace directives dropped (the go command ignores them in a
// dependency), `go mod tidy` (which must leave go.mod as it is), then
// `go build ./...` and `go vet ./...` (which compiles the
// tests too) with GOWORK=off, every sibling resolved at version through the
// proxy. It reports each module on progress and returns the first failure.
func Verify(ctx context.Context, proxyDir, work string, mods []Module, version string, progress io.Writer) error {
	env, err := ProxyEnv(proxyDir, filepath.Join(work, "modcache"), mods)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if err := ctx.Err(); err != nil {
			return err
		}
		escaped, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		ev, err := module.EscapeVersion(version)
		if err != nil {
			return err
		}
		zipFile := filepath.Join(proxyDir, filepath.FromSlash(escaped), "@v", ev+".zip")
		dir := filepath.Join(work, "src", filepath.FromSlash(m.Dir))
		if err := modzip.Unzip(dir, module.Version{Path: m.Path, Version: version}, zipFile); err != nil {
			return fmt.Errorf("release: unzip %s: %w", m.Path, err)
		}
		gomod := filepath.Join(dir, "go.mod")
		data, err := os.ReadFile(gomod)
		if err != nil {
			return err
		}
		if data, err = dropReplaces(data); err != nil {
			return fmt.Errorf("release: %s: %w", m.Path, err)
		}
		if err := os.WriteFile(gomod, data, 0o644); err != nil {
			return err
		}
		// go mod tidy fills go.sum in (it holds no sibling's sums: the
		// replace lines stood in for them) and must leave go.mod as it is
		// published: a requirement missing there is missing for a user.
		if err := goCmd(dir, env, "mod", "tidy"); err != nil {
			return fmt.Errorf("release: %s@%s: %w", m.Path, version, err)
		}
		tidy, err := os.ReadFile(gomod)
		if err != nil {
			return err
		}
		if diff := requirementDiff(data, tidy); diff != "" {
			return fmt.Errorf("release: %s@%s: go.mod is not tidy: run go mod tidy in %s (%s)", m.Path, version, m.Dir, diff)
		}
		for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
			if err := goCmd(dir, env, args...); err != nil {
				return fmt.Errorf("release: %s@%s does not build from the proxy: %w", m.Path, version, err)
			}
		}
		fmt.Fprintf(progress, "built %s@%s from the proxy, no replace directive\n", m.Path, version)
	}
	return nil
}

// requirementDiff names the requirements that differ between two go.mod
// files (path, version, indirect comment), or returns "".
func requirementDiff(published, tidy []byte) string {
	reqs := func(data []byte) map[string]string {
		mf, err := modfile.Parse("go.mod", data, nil)
		if err != nil {
			return map[string]string{"unparsable go.mod": err.Error()}
		}
		out := map[string]string{}
		for _, r := range mf.Require {
			out[r.Mod.Path] = r.Mod.Version
			if r.Indirect {
				out[r.Mod.Path] += " // indirect"
			}
		}
		return out
	}
	a, b := reqs(published), reqs(tidy)
	var diffs []string
	for p, v := range a {
		if w, ok := b[p]; !ok {
			diffs = append(diffs, "drops "+p+" "+v)
		} else if v != w {
			diffs = append(diffs, "changes "+p+" "+v+" to "+w)
		}
	}
	for p, v := range b {
		if _, ok := a[p]; !ok {
			diffs = append(diffs, "adds "+p+" "+v)
		}
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "; ")
}
