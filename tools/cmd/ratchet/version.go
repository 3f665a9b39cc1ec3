package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/stores/mongodb"
)

// modulePrefix is the path every module of Ratchet starts with.
const modulePrefix = "github.com/ratchet-go/ratchet"

// versionInfo is what `ratchet version` prints.
type versionInfo struct {
	Go      string            `json:"go"`
	Modules map[string]string `json:"modules"`
	// Schemas are the schema versions this binary expects, by dialect
	// (ddl.Latest), and MongoDB's collection layout.
	Schemas map[string]int `json:"schemas"`
}

// versionOf reads the binary's build information.
func versionOf() versionInfo {
	v := versionInfo{Go: runtime.Version(), Modules: map[string]string{}, Schemas: map[string]int{}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Modules[bi.Main.Path] = bi.Main.Version
		for _, d := range bi.Deps {
			if strings.HasPrefix(d.Path, modulePrefix) {
				v.Modules[d.Path] = d.Version
			}
		}
	}
	for _, d := range ddl.Dialects() {
		v.Schemas[d] = ddl.Latest(d)
	}
	v.Schemas["mongodb"] = mongodb.SchemaVersion
	return v
}

// versionCommand is `ratchet version`: the versions of the binary's
// modules and the schema versions it expects.
func versionCommand(fs *flag.FlagSet) action {
	asJSON := fs.Bool("json", false, "write JSON")
	return func(_ context.Context, _ []string, stdout, _ io.Writer) int {
		v := versionOf()
		if *asJSON {
			if err := writeJSON(stdout, v); err != nil {
				return 1
			}
			return 0
		}
		fmt.Fprintf(stdout, "ratchet %s (%s)\n", v.Modules[modulePrefix+"/tools"], v.Go)
		fmt.Fprintln(stdout, "modules:")
		for _, m := range slices.Sorted(maps.Keys(v.Modules)) {
			fmt.Fprintf(stdout, "  %s %s\n", m, v.Modules[m])
		}
		fmt.Fprintln(stdout, "schema versions this binary expects:")
		for _, d := range slices.Sorted(maps.Keys(v.Schemas)) {
			what := "version"
			if d == "mongodb" {
				what = "collection layout"
			}
			fmt.Fprintf(stdout, "  %-10s %s %d\n", d, what, v.Schemas[d])
		}
		return 0
	}
}
