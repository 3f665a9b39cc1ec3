package release

import (
	"fmt"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/exp/apidiff"
	"golang.org/x/tools/go/packages"
)

// APIChanges is the API report of one module against its previous release.
type APIChanges struct {
	Module   Module
	Previous string // the previous version; empty when the module is new
	Report   apidiff.Report
}

// Incompatible counts the report's breaking changes.
func (c APIChanges) Incompatible() int {
	n := 0
	for _, ch := range c.Report.Changes {
		if !ch.Compatible {
			n++
		}
	}
	return n
}

// Write prints the report, one line per change.
func (c APIChanges) Write(w io.Writer) {
	switch {
	case c.Previous == "":
		fmt.Fprintf(w, "%s: a new module, nothing to compare\n", c.Module.Path)
		return
	case len(c.Report.Changes) == 0:
		fmt.Fprintf(w, "%s: API unchanged since %s\n", c.Module.Path, c.Previous)
		return
	}
	fmt.Fprintf(w, "%s: since %s, %d incompatible and %d compatible changes\n",
		c.Module.Path, c.Previous, c.Incompatible(), len(c.Report.Changes)-c.Incompatible())
	for _, ch := range c.Report.Changes {
		kind := "compatible"
		if !ch.Compatible {
			kind = "INCOMPATIBLE"
		}
		fmt.Fprintf(w, "  %s: %s\n", kind, ch.Message)
	}
}

// PublicAPI loads the exported packages of mods (those outside internal/
// folders, but main packages) from tree, a workspace, type-checked.
func PublicAPI(tree string, mods []Module) (map[string][]*types.Package, error) {
	var patterns []string
	for _, m := range mods {
		patterns = append(patterns, m.Path+"/...")
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedModule,
		Dir:  tree,
		Env:  append(os.Environ(), "GOWORK="+filepath.Join(tree, "go.work"), "GOFLAGS=-mod=readonly"),
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("release: loading the API of %s: %w", tree, err)
	}
	byModule := map[string][]*types.Package{}
	var errs []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
		if p.Types == nil || p.Name == "main" || p.Module == nil ||
			slices.Contains(strings.Split(p.PkgPath, "/"), "internal") {
			continue
		}
		byModule[p.Module.Path] = append(byModule[p.Module.Path], p.Types)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("release: loading the API of %s: %s", tree, strings.Join(errs, "; "))
	}
	return byModule, nil
}

// APIReport compares, module by module, the public API of newTree with
// that of oldTree (the previous release, at previous[m.Path]; a module
// missing there is new).
func APIReport(oldTree, newTree string, oldMods, newMods []Module, previous map[string]string) ([]APIChanges, error) {
	newAPI, err := PublicAPI(newTree, newMods)
	if err != nil {
		return nil, err
	}
	oldAPI := map[string][]*types.Package{}
	if len(oldMods) > 0 {
		if oldAPI, err = PublicAPI(oldTree, oldMods); err != nil {
			return nil, err
		}
	}
	var out []APIChanges
	for _, m := range newMods {
		c := APIChanges{Module: m, Previous: previous[m.Path]}
		if c.Previous != "" {
			c.Report = apidiff.ModuleChanges(
				&apidiff.Module{Path: m.Path, Packages: oldAPI[m.Path]},
				&apidiff.Module{Path: m.Path, Packages: newAPI[m.Path]})
		}
		out = append(out, c)
	}
	return out, nil
}
