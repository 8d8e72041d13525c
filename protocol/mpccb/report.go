package mpccb

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// report is a party's disclosure to the initiator.
type report struct {
	Steps           int64
	Rounds          int64
	Words           int64
	CorrectionWords int64
	RewardTotal     float64
	RewardCurve     []float64
	CheckpointEvery int64
	ElapsedNs       int64
}

func encodeReport(r report) []byte {
	b, err := proto.Marshal(&mpccbpb.Report{Steps: r.Steps, Rounds: r.Rounds, Words: r.Words,
		CorrectionWords: r.CorrectionWords, RewardTotal: r.RewardTotal, RewardCurve: r.RewardCurve,
		CheckpointEvery: r.CheckpointEvery, ElapsedNs: r.ElapsedNs})
	if err != nil {
		panic(fmt.Sprintf("mpccb: encoding a report: %v", err))
	}
	return b
}

func decodeReport(b []byte) (report, error) {
	var m mpccbpb.Report
	if err := proto.Unmarshal(b, &m); err != nil {
		return report{}, fmt.Errorf("malformed report: %w", err)
	}
	if len(m.RewardCurve) > 100_000 {
		return report{}, fmt.Errorf("a reward curve of %d points", len(m.RewardCurve))
	}
	return report{Steps: m.Steps, Rounds: m.Rounds, Words: m.Words, CorrectionWords: m.CorrectionWords,
		RewardTotal: m.RewardTotal, RewardCurve: m.RewardCurve, CheckpointEvery: m.CheckpointEvery, ElapsedNs: m.ElapsedNs}, nil
}
