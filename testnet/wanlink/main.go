// Command wanlink emulates wide-area links for testnet/wan.sh: it runs one
// Toxiproxy TCP proxy per ordered pair of organizations, each with the
// toxics of a link profile (latency, jitter, bandwidth, resets, slicing), in
// one process, until it is sent SIGINT or SIGTERM. The kernel here has no
// netem, so the link conditions come from Toxiproxy used as a library.
//
//	wanlink -profile continental -links DIR/links -ready DIR/wanlink.ready
//
// The links file has one proxy a line, "NAME LISTEN UPSTREAM", e.g.
// "node1-node2 10.77.0.1:21102 10.77.0.12:4001"; blank lines and lines
// starting with # are skipped. Every toxic is put on both directions of a
// proxy, so a proxy adds the profile's one-way latency each way whichever
// side opened the connection.
//
// wanlink is a Go module of its own, so that Toxiproxy and its logger stay
// out of the daemon's go.mod; build it from this directory:
//
//	cd testnet/wanlink && go build -o /tmp/wanlink .
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "wanlink: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("wanlink", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profileName := fs.String("profile", "lan", "link profile: "+strings.Join(profileNames(), ", "))
	linksPath := fs.String("links", "", "file of proxies, one \"NAME LISTEN UPSTREAM\" a line (required)")
	readyPath := fs.String("ready", "", "file to create once every proxy listens (optional)")
	verbose := fs.Bool("v", false, "log every connection Toxiproxy opens and closes")
	closeLinks := fs.String("close-links", "", "comma-separated proxy names whose every connection is closed -close-after-ms after its first byte, on top of the profile (names this process does not run are ignored)")
	closeAfterMs := fs.Int64("close-after-ms", 5000, "with -close-links: how long after its first byte a connection is closed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	prof, ok := profiles()[*profileName]
	if !ok {
		return fmt.Errorf("unknown profile %q; the profiles are %s", *profileName, strings.Join(profileNames(), ", "))
	}
	if *closeAfterMs <= 0 {
		return fmt.Errorf("-close-after-ms must be positive, not %d", *closeAfterMs)
	}
	if *linksPath == "" {
		return errors.New("-links is required")
	}
	links, err := readLinks(*linksPath)
	if err != nil {
		return err
	}

	level := zerolog.WarnLevel
	if *verbose {
		level = zerolog.InfoLevel
	}
	closing := map[string]bool{}
	for _, name := range strings.Split(*closeLinks, ",") {
		if name = strings.TrimSpace(name); name != "" {
			closing[name] = true
		}
	}
	server, err := startProxies(links, prof, closing, *closeAfterMs, zerolog.New(stderr).Level(level).With().Timestamp().Logger())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wanlink: %d proxies up, profile %s (%s)\n", len(links), *profileName, prof.describe())
	if *readyPath != "" {
		if err := os.WriteFile(*readyPath, []byte("ready\n"), 0o644); err != nil {
			return fmt.Errorf("writing the ready file: %w", err)
		}
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	if err := server.Collection.Clear(); err != nil {
		return fmt.Errorf("stopping the proxies: %w", err)
	}
	return nil
}

// link is one proxy: it listens on listen and forwards to upstream.
type link struct{ name, listen, upstream string }

func readLinks(path string) ([]link, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the links file: %w", err)
	}
	defer f.Close()
	var links []link
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s:%d: want \"NAME LISTEN UPSTREAM\", got %q", path, n, line)
		}
		links = append(links, link{fields[0], fields[1], fields[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(links) == 0 {
		return nil, fmt.Errorf("%s lists no proxies", path)
	}
	return links, nil
}

// startProxies starts one proxy per link, each with the profile's toxics on
// both directions (and, on the links named in closing, a close_after toxic
// of closeAfterMs on every connection), and returns the server that holds
// them; its Collection.Clear stops them.
func startProxies(links []link, prof profile, closing map[string]bool, closeAfterMs int64, logger zerolog.Logger) (*toxiproxy.ApiServer, error) {
	toxics.Register(latencyMicrosType, new(latencyMicros))
	toxics.Register(rateType, new(rate))
	toxics.Register(closeAfterType, new(closeAfter))
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), logger)
	for _, l := range links {
		p := toxiproxy.NewProxy(server, l.name, l.listen, l.upstream)
		if err := server.Collection.Add(p, true); err != nil {
			server.Collection.Clear()
			return nil, fmt.Errorf("starting proxy %s on %s: %w", l.name, l.listen, err)
		}
		ts := prof.toxics()
		if closing[l.name] {
			ts = append(ts, toxicSpec{"targeted_close", closeAfterType, 1, fmt.Sprintf(`{"after_ms":%d}`, closeAfterMs)})
		}
		for _, t := range ts {
			for _, dir := range []string{"upstream", "downstream"} {
				body := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":%g,"attributes":%s}`,
					t.name+"_"+dir, t.kind, dir, t.toxicity, t.attributes)
				if _, err := p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
					server.Collection.Clear()
					return nil, fmt.Errorf("adding toxic %s to proxy %s: %w", t.name, l.name, err)
				}
			}
		}
	}
	return server, nil
}
