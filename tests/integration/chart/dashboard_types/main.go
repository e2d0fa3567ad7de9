// Holds the chart's Grafana dashboards to Grafana's own dashboard types: the Grafana
// Foundation SDK's generated Go types (the dashboard schema Grafana ships, with every panel
// and data-query plugin registered), decoded strictly: an unknown or mistyped field anywhere,
// a panel type Grafana has no plugin for, or a query that is not a Prometheus query fails,
// naming the file and the field's path.
//
//	go run . FILE.json...   # prints one summary line per dashboard; exit 1 on the first error
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

func check(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var d dashboard.Dashboard
	if err := failure(d.UnmarshalJSONStrict(raw)); err != nil {
		return "", err
	}
	if err := failure(d.Validate()); err != nil {
		return "", err
	}
	// Each panel decoded on its own: v0.0.22's PanelOrRowPanel drops a panel whose decoder
	// returns an empty cog.BuildErrors (not == nil), leaving Panel nil.
	var raws struct {
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(raw, &raws); err != nil {
		return "", err
	}
	panels, queries := 0, 0
	for i, rawPanel := range raws.Panels {
		panel := &dashboard.Panel{}
		if err := failure(panel.UnmarshalJSONStrict(rawPanel)); err != nil {
			return "", fmt.Errorf("panels[%d]: %w", i, err)
		}
		if panel.Type == "row" {
			return "", fmt.Errorf("panels[%d]: rows are not used by these dashboards", i)
		}
		if _, known := cog.ConfigForPanelcfgVariant(panel.Type); !known {
			return "", fmt.Errorf("panels[%d] (%q): no Grafana panel plugin %q", i, title(panel), panel.Type)
		}
		if panel.Datasource == nil || panel.Datasource.Type == nil || *panel.Datasource.Type != "prometheus" {
			return "", fmt.Errorf("panels[%d] (%q): datasource.type is not prometheus", i, title(panel))
		}
		// The targets too: a query whose strict decoder succeeds is dropped the same way.
		var targets struct {
			Targets []json.RawMessage `json:"targets"`
		}
		if err := json.Unmarshal(rawPanel, &targets); err != nil {
			return "", err
		}
		if len(targets.Targets) == 0 {
			return "", fmt.Errorf("panels[%d] (%q): no targets", i, title(panel))
		}
		for j, rawTarget := range targets.Targets {
			q := &prometheus.Dataquery{}
			if err := failure(q.UnmarshalJSONStrict(rawTarget)); err != nil {
				return "", fmt.Errorf("panels[%d] (%q).targets[%d]: not a Prometheus query: %w", i, title(panel), j, err)
			}
			if q.Expr == "" {
				return "", fmt.Errorf("panels[%d] (%q).targets[%d]: empty expr", i, title(panel), j)
			}
			queries++
		}
		panels++
	}
	if panels == 0 {
		return "", fmt.Errorf("no panels")
	}
	return fmt.Sprintf("%s: %q, %d panels, %d Prometheus queries", path, stringOr(d.Title), panels, queries), nil
}

// failure is err unless it is an empty cog.BuildErrors: some generated decoders return their
// (nil) error slice as an error interface, which is not == nil.
func failure(err error) error {
	if errs, ok := err.(cog.BuildErrors); ok && len(errs) == 0 {
		return nil
	}
	return err
}

func title(p *dashboard.Panel) string { return stringOr(p.Title) }

func stringOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run . DASHBOARD.json...")
		os.Exit(2)
	}
	plugins.RegisterDefaultPlugins()
	for _, path := range os.Args[1:] {
		summary, err := check(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(1)
		}
		fmt.Println(summary)
	}
}
