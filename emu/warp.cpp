// Warp collectives (emu/emu.h: shuffles, votes, __syncwarp, __activemask, matches):
// each lane deposits its value and waits in a group with the lanes its mask names, at
// the same call site; the last lane to arrive completes the group, every lane's result
// computed from the deposits at once, as a warp does in one instruction. A mask that
// names a lane that cannot come is a synccheck fault.
#include <cstdint>
#include <string>

#include "emu/internal.h"

namespace wb::emu::internal {
namespace {

const char* collective_name(Collective kind) {
  switch (kind) {
    case Collective::shuffle:
      return "shuffle";
    case Collective::vote:
      return "warp vote";
    case Collective::syncwarp:
      return "__syncwarp";
    case Collective::match_any:
    case Collective::match_all:
      return "warp match";
    case Collective::converge:
      return "__activemask";
    case Collective::matrix:
    case Collective::matrix_exchange:
      return "warp matrix function";
  }
  return "collective";
}

// The results of a group whose lanes have all arrived; every lane is made ready (the
// one completing it too: it is suspended like the others until the scheduler resumes
// it).
WB_EMU_NO_TSAN void complete(Block& b, int warp, const Group& g, unsigned syncwarp_slots) {
  Thread* lanes = &b.threads[std::size_t(warp) * 32];
  const unsigned mask = g.mask;
  unsigned votes = 0;
  for (int l = 0; l < 32; ++l)
    if ((mask & (1u << l)) && lanes[l].value) votes |= 1u << l;
  bool all_equal = true;
  for (int l = 0; l < 32; ++l)
    if ((mask & (1u << l)) && lanes[l].value != lanes[__builtin_ctz(mask)].value) all_equal = false;
  for (int l = 0; l < 32; ++l) {
    if (!(mask & (1u << l))) continue;
    Thread& t = lanes[l];
    uint64_t r = ~uint64_t(0);  // poison: the source lane takes no part
    switch (g.kind) {
      case Collective::vote:
        r = votes;
        break;
      case Collective::shuffle: {
        const int src = t.source;
        if (src >= 32)
          r = lanes[src - 32].value;
        else if (src >= 0 && (mask & (1u << src)))
          r = lanes[src].value;
        break;
      }
      case Collective::match_any: {
        unsigned same = 0;
        for (int j = 0; j < 32; ++j)
          if ((mask & (1u << j)) && lanes[j].value == t.value) same |= 1u << j;
        r = same;
        break;
      }
      case Collective::match_all:
        r = all_equal ? (uint64_t(1) << 32) | mask : 0;
        break;
      case Collective::syncwarp:
      case Collective::matrix_exchange:
        r = 0;
        t.synced_mask = mask;
        t.synced_slots = syncwarp_slots;
        break;
      case Collective::matrix:
        r = 0;
        break;
      case Collective::converge:
        break;
    }
    if (t.gathered) {
      for (int j = 0; j < 32; ++j)
        if (mask & (1u << j)) t.gathered[j] = lanes[j].value;
      t.gathered = nullptr;
    }
    t.result = r;
    t.state = State::ready;
  }
}

// The checks of a collective's mask: it names the calling lane, and only lanes that
// the block has and that have not exited.
WB_EMU_NO_TSAN void check_mask(Site site, const char* what, unsigned mask, const Thread& t, const Warp& wp,
                               const Block& b) {
  const unsigned me = 1u << t.lane;
  if (!(mask & me))
    raise(kLaunchFailure, "synccheck",
          std::string(what) + " at " + site_text(site) + ": its mask " + mask_text(mask) +
              " does not name the calling lane " + std::to_string(t.lane));
  if (mask & ~wp.exists)
    raise(kLaunchFailure, "synccheck",
          std::string(what) + " at " + site_text(site) + ": its mask " + mask_text(mask) + " names lanes " +
              lanes_text(mask & ~wp.exists) + ", which this block (" + std::to_string(b.threads.size()) +
              " threads) does not have");
  if (mask & ~wp.live)
    raise(kLaunchFailure, "synccheck",
          std::string(what) + " at " + site_text(site) + ": its mask " + mask_text(mask) + " names lanes " +
              lanes_text(mask & ~wp.live) + ", which have exited");
}

// The pending group of the warp that the calling lane joins (null: none, it starts
// one): the lanes at this call site with this mask. A group is the lanes' n-th
// meeting at its site under its mask for every lane in it, so site and mask identify
// it: a lane waits in one group at a time, and a group completes only when every lane
// its mask names has arrived, so none of them can reach that site and mask again
// before it has. A lane that other lanes wait for at another collective may arrive
// here first (two half-warps each shuffling under their own mask, one of them already
// waiting at the full-warp shuffle that follows): under independent thread scheduling
// (sm_70+) the lanes waiting there do not stop it, and it comes to them afterwards.
// If it never does, no lane can run and the scheduler reports the deadlock, naming
// both collectives. A mask that overlaps another group's at this very call is a
// synccheck fault.
WB_EMU_NO_TSAN Group* group_to_join(Site site, Collective kind, const char* what, unsigned mask, const Thread& t,
                                    Warp& wp) {
  const bool converge = kind == Collective::converge;
  for (Group& g : wp) {
    if (!same_site(g.site, site) || g.kind != kind) continue;
    if (converge || g.mask == mask) return &g;
    if (g.mask & mask)
      raise(kLaunchFailure, "synccheck",
            std::string(what) + " at " + site_text(site) + ": lane " + std::to_string(t.lane) + " arrives with mask " +
                mask_text(mask) + ", lanes " + lanes_text(g.arrived) + " with mask " + mask_text(g.mask) +
                ": the lanes of one collective must name the same lanes");
  }
  return nullptr;
}

// ThreadSanitizer: a lane arriving at a collective that orders memory releases the
// next of its two slots, and keeps which one in its own synced_slots bit.
WB_EMU_NO_TSAN void release_slot(Block& b, Thread& t) {
  const unsigned me = 1u << t.lane;
  const unsigned slot = t.syncwarp_count++ & 1;
  fiber::release(&b.syncs->lane[t.linear][slot]);
  t.synced_slots = (t.synced_slots & ~me) | (slot << t.lane);
}

// The slot each lane of the mask released at (kept in its own synced_slots bit, set
// as it arrived), gathered for the lanes' acquires.
WB_EMU_NO_TSAN unsigned released_slots(const Block& b, int warp, unsigned mask) {
  unsigned slots = 0;
  for (int l = 0; l < 32; ++l)
    if (mask & (1u << l)) slots |= b.threads[std::size_t(warp) * 32 + l].synced_slots & (1u << l);
  return slots;
}

// ThreadSanitizer: after a collective that orders memory, the lane acquires what
// every lane of its group released.
WB_EMU_NO_TSAN void acquire_slots(Block& b, const Thread& t) {
  for (int l = 0; l < 32; ++l)
    if (t.synced_mask & (1u << l))
      fiber::acquire(&b.syncs->lane[std::size_t(t.warp) * 32 + l][(t.synced_slots >> l) & 1]);
}

}  // namespace

// A lane arrives at a collective: it joins the group of lanes at this call site with
// this mask, or starts one, and waits until the last lane of the group completes it.
WB_EMU_NO_TSAN uint64_t collective(Site site, Collective kind, unsigned mask, uint64_t value, int source) {
  Worker& w = *tls_worker;
  Thread& t = *w.current;
  Block& b = *w.block;
  Warp& wp = b.warps[t.warp];
  const bool matrix = kind == Collective::matrix || kind == Collective::matrix_exchange;
  const char* what = matrix && t.matrix_what ? t.matrix_what : collective_name(kind);
  const bool converge = kind == Collective::converge;
  if (!converge) check_mask(site, what, mask, t, wp, b);
  Group* group = group_to_join(site, kind, what, mask, t, wp);
  if (!group) {
    group = wp.add(Group{kind, site, converge ? 0u : mask, 0});
  }
  t.value = value;
  t.source = source;
  t.quiet = 0;
  group->arrived |= 1u << t.lane;
  // Only __syncwarp orders memory among the lanes; a shuffle or a vote exchanges
  // registers and orders nothing (CUDA's memory model), so ThreadSanitizer sees no
  // edge for them.
  const bool orders_memory = kind == Collective::syncwarp || kind == Collective::matrix_exchange;
  if (orders_memory) release_slot(b, t);
  t.state = State::collective;
  t.wait_site = site;
  if (!converge && group->arrived == mask) {
    count_collective(b, t, site, mask);
    complete(b, t.warp, *group, released_slots(b, t.warp, mask));
    wp.remove(group);
  }
  yield(w, t);
  if (orders_memory) acquire_slots(b, t);
  return t.result;
}

}  // namespace wb::emu::internal

namespace wb::emu {
using namespace internal;

WB_EMU_NO_TSAN uint64_t shuffle(Site site, unsigned mask, uint64_t value, Exchange kind, int arg, int width) {
  Worker& w = *tls_worker;
  const int lane = w.current->lane;
  if (width <= 0 || width > 32 || (width & (width - 1)))
    raise(kLaunchFailure, "synccheck",
          "shuffle at " + site_text(site) + ": width " + std::to_string(width) + " is not a power of two up to 32");
  const int segment = lane & ~(width - 1);
  int source = -1;
  switch (kind) {
    case Exchange::index:
      source = segment + (((arg % width) + width) % width);
      break;
    case Exchange::bxor: {
      const int s = lane ^ arg;  // a lane of a later segment gives the caller its own value
      source = s >= 0 && s < segment + width ? s : 32 + lane;
      break;
    }
    case Exchange::up:
      source = lane - arg >= segment ? lane - arg : 32 + lane;
      break;
    case Exchange::down:
      source = lane + arg < segment + width ? lane + arg : 32 + lane;
      break;
  }
  return collective(site, Collective::shuffle, mask, value, source);
}

WB_EMU_NO_TSAN unsigned ballot(Site site, unsigned mask, bool predicate) {
  return unsigned(collective(site, Collective::vote, mask, predicate ? 1 : 0, -1));
}

WB_EMU_NO_TSAN void syncwarp(Site site, unsigned mask) { collective(site, Collective::syncwarp, mask, 0, -1); }

WB_EMU_NO_TSAN unsigned active_mask(Site site) { return unsigned(collective(site, Collective::converge, 0, 0, -1)); }

WB_EMU_NO_TSAN unsigned match_any(Site site, unsigned mask, uint64_t value) {
  return unsigned(collective(site, Collective::match_any, mask, value, -1));
}

WB_EMU_NO_TSAN unsigned match_all(Site site, unsigned mask, uint64_t value, int* predicate) {
  const uint64_t r = collective(site, Collective::match_all, mask, value, -1);
  *predicate = int(r >> 32);
  return unsigned(r);
}

}  // namespace wb::emu
