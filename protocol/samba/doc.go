// Package samba is SAMBA, secure federated cumulative-reward maximization
// (Ciucanu, Lafourcade, Marcadet, Soare, "SAMBA: A Generic Framework for
// Secure Federated Multi-Armed Bandits", JAIR 2022): K data owners each hold
// one arm; a data customer buys a budget of N pulls and learns the
// cumulative reward and nothing else; a controller and comp share the
// server's work so that the controller sees only ciphertexts and comp sees
// only permuted, masked scores. Six algorithms: ε-greedy (fixed and
// decreasing ε), UCB, Thompson sampling, softmax and pursuit, each equal step
// for step to the standard algorithm (Theorem 2).
//
// Roles: data_customer, controller, comp, data_owner ×K. What each role
// learns (Figure 7): a data owner, its own arm's rewards and pulls; the data
// customer, the cumulative reward; the controller, ciphertexts only (AES-GCM
// for comp, Paillier for the data customer) and the permutations it drew;
// comp, each iteration's permuted masked scores (their order, which are equal
// and the ratios of their differences, and for a probability matching their
// ratios; leakage states it per algorithm) and which position it picked,
// never which data owner is where.
//
// The spec's keys, the choices where the paper is ambiguous, the refused role
// combinations and the experiments are in docs/protocols/samba.md.
package samba
