#pragma once
// The step kinds, as the functional check (sim/functional) tells them apart.
// Every kind accepts a StepVisitor (Step::accept) and the visitor has one pure
// case per kind, so a check that does not cover a new kind does not compile
// (docs/ARCHITECTURE.md, "Adding a step kind"). Each kind is declared beside
// its factory, with the accessors the check reads; its programs and closed
// form stay in its own .cpp.
namespace wafersim::mapping {

class RootComputeStep;
class LookupStep;
class GemvToColumnStep;
class GemvToRowStep;
class LineComputeStep;
class BroadcastStep;
class GatherStep;
class AttentionStep;
class GridAttentionStep;
class MeshGemmStep;
class SliceExchangeStep;
class DispatchStep;

class StepVisitor {
 public:
  virtual ~StepVisitor() = default;
  virtual void visit(const RootComputeStep& step) = 0;
  virtual void visit(const LookupStep& step) = 0;
  virtual void visit(const GemvToColumnStep& step) = 0;
  virtual void visit(const GemvToRowStep& step) = 0;
  virtual void visit(const LineComputeStep& step) = 0;
  virtual void visit(const BroadcastStep& step) = 0;
  virtual void visit(const GatherStep& step) = 0;
  virtual void visit(const AttentionStep& step) = 0;
  virtual void visit(const GridAttentionStep& step) = 0;
  virtual void visit(const MeshGemmStep& step) = 0;
  virtual void visit(const SliceExchangeStep& step) = 0;
  virtual void visit(const DispatchStep& step) = 0;
};

}  // namespace wafersim::mapping
