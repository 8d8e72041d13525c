package samba

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/experiment"

	"github.com/bandit-node/bandit-node/protocol/samba"
)

// writeSAMBA writes samba_runs.csv (one row per run), samba_roles.csv (one
// row per run and role), samba_summary.csv (one row per point), the
// figures and samba_results.md; it sets rep.Claims.
func writeSAMBA(o Options, data sambaDataset, rep *Report) ([]string, error) {
	runs := slices.Clone(rep.Runs)
	slices.SortFunc(runs, func(a, b Session) int {
		if c := strings.Compare(a.Algorithm, b.Algorithm); c != 0 {
			return c
		}
		if a.K != b.K {
			return a.K - b.K
		}
		if a.Budget != b.Budget {
			return int(a.Budget - b.Budget)
		}
		return a.Run - b.Run
	})
	var files []string
	var rows, roleRows [][]string
	for _, r := range runs {
		rows = append(rows, []string{r.Algorithm, strconv.Itoa(r.K), fmt.Sprint(r.Budget), strconv.Itoa(r.Run), fmt.Sprint(r.Seed),
			fmt.Sprint(r.Reward), fmt.Sprint(r.StandardReward), strconv.FormatBool(r.SameSequence), strconv.FormatBool(r.Exact),
			fmt.Sprintf("%.4f", r.SecureSeconds), fmt.Sprintf("%.4f", r.SetupSeconds), fmt.Sprintf("%.4f", r.SecureWallSeconds), fmt.Sprintf("%.7f", r.StandardSeconds),
			fmt.Sprintf("%.1f", r.SecureSeconds/r.StandardSeconds), strconv.FormatBool(r.CPUClock), fmt.Sprint(r.Messages), fmt.Sprint(r.Bytes),
			fmt.Sprint(r.OwnerMessages[0]), fmt.Sprint(r.OwnerMessages[1]), fmt.Sprint(r.OwnerBytes[0]), fmt.Sprint(r.OwnerBytes[1])})
		for _, role := range sambaRoles() {
			c := r.Costs[role]
			parties := 1
			if role == samba.RoleOwner {
				parties = r.K
			}
			roleRows = append(roleRows, []string{r.Algorithm, strconv.Itoa(r.K), fmt.Sprint(r.Budget), strconv.Itoa(r.Run), role, strconv.Itoa(parties),
				fmt.Sprint(c.Messages), fmt.Sprint(c.Bytes), fmt.Sprint(c.AESOps), fmt.Sprint(c.PaillierOps), fmt.Sprintf("%.4f", c.BusySeconds)})
		}
	}
	for _, f := range []struct {
		name   string
		header []string
		rows   [][]string
	}{
		{"samba_runs.csv", []string{"algorithm", "k", "budget", "run", "seed", "secure_reward", "standard_reward", "same_arm_sequence", "exact",
			"secure_seconds", "setup_seconds", "secure_wall_seconds", "standard_seconds", "overhead", "cpu_clock", "messages", "bytes",
			"owner_messages_min", "owner_messages_max", "owner_bytes_min", "owner_bytes_max"}, rows},
		{"samba_roles.csv", []string{"algorithm", "k", "budget", "run", "role", "parties", "messages", "bytes", "aes_ops", "paillier_ops", "busy_seconds"}, roleRows},
	} {
		path := filepath.Join(o.Out, f.name)
		if err := experiment.WriteCSV(path, f.header, f.rows); err != nil {
			return nil, err
		}
		files = append(files, path)
	}

	pts := summarizeSAMBA(rep.Runs)
	keys := make([]sambaKey, 0, len(pts))
	for k := range pts {
		keys = append(keys, k)
	}
	algIndex := func(a string) int { return slices.Index(sambaAlgorithms(), a) }
	slices.SortFunc(keys, func(a, b sambaKey) int {
		if a.K != b.K {
			return a.K - b.K
		}
		if a.Budget != b.Budget {
			return int(a.Budget - b.Budget)
		}
		return algIndex(a.Algorithm) - algIndex(b.Algorithm)
	})
	var sumRows [][]string
	for _, k := range keys {
		p := pts[k]
		sumRows = append(sumRows, []string{p.Algorithm, strconv.Itoa(p.K), fmt.Sprint(p.Budget), strconv.Itoa(p.Runs), strconv.Itoa(p.Exact),
			fmt.Sprintf("%.1f", p.Reward.Mean), fmt.Sprintf("%.1f", p.Reward.Low), fmt.Sprintf("%.1f", p.Reward.High), fmt.Sprintf("%.1f", p.StandardReward.Mean),
			fmt.Sprintf("%.4f", p.Secure.Mean), fmt.Sprintf("%.4f", p.Secure.Low), fmt.Sprintf("%.4f", p.Secure.High),
			fmt.Sprintf("%.7f", p.Standard.Mean), fmt.Sprintf("%.1f", p.Overhead),
			fmt.Sprintf("%.4f", p.share(samba.RoleComp, false)), fmt.Sprintf("%.4f", p.share(samba.RoleController, false)),
			fmt.Sprintf("%.4f", p.share(samba.RoleOwner, false)), fmt.Sprintf("%.4f", p.share(samba.RoleOwner, true)),
			fmt.Sprintf("%.5f", p.share(samba.RoleCustomer, false))})
	}
	sumPath := filepath.Join(o.Out, "samba_summary.csv")
	if err := experiment.WriteCSV(sumPath, []string{"algorithm", "k", "budget", "runs", "exact_runs", "reward_mean", "reward_ci_low", "reward_ci_high", "standard_reward_mean",
		"secure_seconds_mean", "secure_seconds_ci_low", "secure_seconds_ci_high", "standard_seconds_mean", "overhead",
		"share_comp", "share_controller", "share_data_owners", "share_one_data_owner", "share_data_customer"}, sumRows); err != nil {
		return nil, err
	}
	files = append(files, sumPath)

	rep.Claims = sambaClaims(o, rep.Runs, pts)
	figs, err := plotSAMBA(o, data.Name, pts)
	if err != nil {
		return nil, err
	}
	files = append(files, figs...)
	md := sambaMarkdown(o, data, rep, pts)
	if len(o.Batches) > 0 {
		written, section, n, err := writeBatches(o, data)
		if err != nil {
			return nil, err
		}
		rep.BatchRuns = n
		files = append(files, written...)
		md += section
	}
	mdPath := filepath.Join(o.Out, "samba_results.md")
	if err := os.WriteFile(mdPath, []byte(md), 0o644); err != nil {
		return nil, err
	}
	return append(files, mdPath), nil
}

// sambaMarkdown renders samba_results.md.
func sambaMarkdown(o Options, data sambaDataset, rep *Report, pts map[sambaKey]sambaPoint) string {
	var b strings.Builder
	ks, n := o.Ks, o.Budget
	kmax := ks[len(ks)-1]
	algs := sambaAlgorithms()
	at := func(alg string, k int, bud int64) sambaPoint { return pts[sambaKey{alg, k, bud}] }
	fmt.Fprintf(&b, "# SAMBA: Figure 8 (%s, K = %s, N up to %d, %d runs per point)\n\n", data.Name, joinInt(ks), n, o.Runs)
	if o.Command != "" {
		fmt.Fprintf(&b, "Command: `%s`. ", o.Command)
	}
	clock := "CPU time of the thread that ran the session"
	if len(rep.Runs) > 0 && !rep.Runs[0].CPUClock {
		clock = "wall time (this system's thread CPU clock is not read)"
	}
	fmt.Fprintf(&b, "%d sessions in %v on %d workers, GOMAXPROCS %d, %s/%s", len(rep.Runs), rep.Elapsed.Round(time.Second), o.Workers,
		runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	if la := rep.LoadAverage; la != "" {
		fmt.Fprintf(&b, ", load average %s at the end", la)
	}
	if rev := experiment.BuildRevision(); rev != "" {
		fmt.Fprintf(&b, ", build %s", rev)
	}
	b.WriteString(".\n\n")
	fmt.Fprintf(&b, "Each session runs every SAMBA role — the daemon's role code — in the simulator: AES-GCM, %d-bit Paillier, "+
		"the roles one after another on one thread (the sequential driver). Its time is the %s, from the roles' creation "+
		"(the data customer's Paillier key generation) to the decrypted sum; the linearity claims fit the steps' time, without the set-up "+
		"(until comp's first list: the key generation, whose prime search varies from run to run, and the data owners' encryptions; "+
		"`setup_seconds` in samba_runs.csv). The standard algorithm is `samba.Reference`: Figure 3 "+
		"in the clear, on the same arms and seed, consuming the same randomness, timed alike (repeated for at least %v). "+
		"Busy time per role is the simulator's wall time inside the role's calls (all data owners together). "+
		"Arms: the %d largest Bernoulli means of %s", o.PaillierBits, clock, minStandardTiming, kmax, data.Name)
	if data.Name == DatasetMovieLens {
		b.WriteString(" (the paper's prototype's MovieLens-100k means: ratings ≥ 4 over all 943 users; μ* = 0.531)")
	}
	b.WriteString(". Parameters: " + data.Tuning.describe() + ".\n\n")

	fmt.Fprintf(&b, "## (a) Cumulative reward, SAMBA against the standard algorithm (the paper's Figure 8(c))\n\n")
	b.WriteString("Mean over runs (± 95 % interval), and how many runs were exact: the same reward and the same arms pulled in the same order.\n\n")
	var cols []string
	for _, k := range ks {
		for _, bud := range sambaBudgets(n, k, kmax) {
			cols = append(cols, fmt.Sprintf("K = %d, N = %d", k, bud))
		}
	}
	experiment.WriteTableHead(&b, []string{"algorithm"}, "%s", cols)
	for _, alg := range algs {
		fmt.Fprintf(&b, "| %s |", alg)
		for _, k := range ks {
			for _, bud := range sambaBudgets(n, k, kmax) {
				p := at(alg, k, bud)
				fmt.Fprintf(&b, " %.0f ± %.0f (standard %.0f; exact %d/%d) |", p.Reward.Mean, p.Reward.High-p.Reward.Mean, p.StandardReward.Mean, p.Exact, p.Runs)
			}
		}
		b.WriteString("\n")
	}

	fmt.Fprintf(&b, "\n## (b) Time, SAMBA against the standard algorithm, and the overhead (Figure 8(a) and (b))\n\n")
	fmt.Fprintf(&b, "N = %d. SAMBA in seconds (± 95 %%), the standard algorithm in milliseconds, and their ratio.\n\n", n)
	experiment.WriteTableHead(&b, []string{"algorithm"}, "K = %d", ks)
	for _, alg := range algs {
		fmt.Fprintf(&b, "| %s |", alg)
		for _, k := range ks {
			p := at(alg, k, n)
			fmt.Fprintf(&b, " %.2f ± %.2f s / %.2f ms = ×%.0f |", p.Secure.Mean, p.Secure.High-p.Secure.Mean, 1e3*p.Standard.Mean, p.Overhead)
		}
		b.WriteString("\n")
	}
	if bs := sambaBudgets(n, kmax, kmax); len(bs) > 1 {
		fmt.Fprintf(&b, "\nAs N grows, K = %d: SAMBA's seconds (in brackets, ms per step, the set-up included).\n\n", kmax)
		experiment.WriteTableHead(&b, []string{"algorithm"}, "N = %d", bs)
		for _, alg := range algs {
			fmt.Fprintf(&b, "| %s |", alg)
			for _, bud := range bs {
				p := at(alg, kmax, bud)
				fmt.Fprintf(&b, " %.2f (%.3f) |", p.Secure.Mean, 1e3*p.Secure.Mean/float64(bud))
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\nThe least-squares line through them, t = a + b·N: a is what does not grow with N — the Paillier key "+
			"generation, the data owners' K Paillier encryptions and the controller's sum —, b the cost of a step.\n\n")
		b.WriteString("| algorithm | a (s) | b (ms per step) | R² |\n|---|---|---|---|\n")
		for _, alg := range algs {
			var xs, ys []float64
			for _, bud := range bs {
				xs = append(xs, float64(bud))
				ys = append(ys, at(alg, kmax, bud).Secure.Mean)
			}
			slope, r2 := linearFit(xs, ys)
			fmt.Fprintf(&b, "| %s | %.2f | %.3f | %.4f |\n", alg, ys[len(ys)-1]-slope*xs[len(xs)-1], 1e3*slope, r2)
		}
	}

	fmt.Fprintf(&b, "\n## (d) Per-role costs (Figure 8(d)), N = %d\n\n", n)
	b.WriteString("Means over runs. The data owners' row is all K of them; \"one data owner\" divides it by K. " +
		"Share: of all parties' busy time.\n\n")
	for _, k := range ks {
		for _, alg := range []string{"ucb", "pursuit"} {
			p := at(alg, k, n)
			fmt.Fprintf(&b, "%s, K = %d:\n\n| role | messages | bytes | AES-GCM ops | Paillier ops | busy s | share |\n|---|---|---|---|---|---|---|\n", alg, k)
			for _, role := range sambaRoles() {
				c := p.Costs[role]
				fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.3f | %.1f %% |\n", role, c.Messages, c.Bytes, c.AESOps, c.PaillierOps, c.BusySeconds, 100*p.share(role, false))
				if role == samba.RoleOwner {
					kk := int64(k)
					fmt.Fprintf(&b, "| one data owner | %d | %d | %d | %d | %.4f | %.2f %% |\n", c.Messages/kk, c.Bytes/kk, c.AESOps/kk, c.PaillierOps/kk,
						c.BusySeconds/float64(k), 100*p.share(role, true))
				}
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("Shares of every algorithm (comp / controller / one data owner / data customer):\n\n")
	experiment.WriteTableHead(&b, []string{"algorithm"}, "K = %d", ks)
	for _, alg := range algs {
		fmt.Fprintf(&b, "| %s |", alg)
		for _, k := range ks {
			p := at(alg, k, n)
			fmt.Fprintf(&b, " %.1f / %.1f / %.2f / %.3f %% |", 100*p.share(samba.RoleComp, false), 100*p.share(samba.RoleController, false),
				100*p.share(samba.RoleOwner, true), 100*p.share(samba.RoleCustomer, false))
		}
		b.WriteString("\n")
	}

	b.WriteString("\n## The paper's claims about Figure 8\n\n")
	experiment.WriteClaims(&b, rep.Claims)
	b.WriteString("\nNot checked here: that the two datasets (MovieLens, Jester) give lines of the same shapes and hierarchy — one dataset per " +
		"invocation; run again with `--dataset FILE` (one arm mean per line) to compare.\n")
	b.WriteString("\nFiles: `samba_runs.csv` (one row per session), `samba_roles.csv` (per session and role), `samba_summary.csv` (per point), " +
		"`samba_reward.png`, `samba_time_n.png`, `samba_time_k.png`, `samba_roles.png`.\n")
	return b.String()
}
