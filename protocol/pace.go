package protocol

// MaxActivationsPerTick bounds the activations of one Activated role in
// one tick of the daemon, so that a tick's work stays bounded whatever rate
// a configuration names.
const MaxActivationsPerTick = 100000
