// Package dataset provides the data of the privacy-preserving contextual
// bandit of Hannun et al. ("Privacy-Preserving Contextual Bandits", docs/papers.md,
// section 5 "Experiments"), and the files through which each organisation
// of a session gets its own part of it.
//
// The pieces, one file each:
//
//   - idx.go: a bounded reader for IDX files (the MNIST format), gzipped or
//     not;
//   - fashion.go: Fashion-MNIST as installed by the Debian package
//     dataset-fashion-mnist in FashionMNISTDir;
//   - pca.go: the plaintext PCA (20 components) and the unit-norm scaling of
//     the projected images;
//   - synthetic.go: the many-arm variant: k-means arms and Gaussian-kernel
//     Bernoulli rewards;
//   - csv.go: an organisation's own table (a CSV file with a header,
//     numeric features and a class label) as contexts and one-hot rewards,
//     with the same PCA and unit-norm scaling;
//   - files.go: the feature parties' and reward receiver's CSV files and the
//     public column split among feature parties;
//   - load.go: Load (in memory, for the simulator) and Prepare (files, for
//     daemons and testnet scripts).
//
// This package reads and writes files: its I/O belongs where a role's local
// data is loaded (a role's construction, the simulator, command-line tools),
// never in a role's steps, which stay free of I/O. It has no package-level
// mutable state; everything random is derived from an explicit seed with
// math/rand/v2's ChaCha8, for reproducible experiments. These seeds make
// data, not secrets.
package dataset
