#pragma once
// What an op header (contract/ops/<op>.h) needs of the op contract: the name of the class
// its spec accessor returns. Variants include the op headers for their argument structs
// and never see the harness's description of an op (contract/op.h: tensor specs, input
// generators, tolerances), so that editing it changes no variant's identity
// (base/source_identity.h); the catalogue's sources include op.h themselves.
namespace wb {

class OpSpec;

}  // namespace wb
