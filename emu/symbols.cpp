#include "emu/symbols.h"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace wb::emu {

std::string reduced_kernel_name(const std::string& demangled) {
  std::string name = demangled;
  for (const char* drop : {"(anonymous namespace)::", "emu_build::", "wb::"}) {
    const std::size_t n = std::strlen(drop);
    for (std::size_t at = name.find(drop); at != std::string::npos; at = name.find(drop, at)) name.erase(at, n);
  }
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {  // cut at the parameter list
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (name[i] == '(' && depth == 0) {
      name.resize(i);
      break;
    }
  }
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  return name;
}

namespace {

struct Symbol {
  std::size_t size;
  std::string mangled;
  std::string unit;
};

// The program's functions by run-time address.
class SymbolTable {
 public:
  SymbolTable() {
    const int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
      ::close(fd);
      return;
    }
    void* map = ::mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) return;
    read(static_cast<const unsigned char*>(map), std::size_t(st.st_size));
    ::munmap(map, std::size_t(st.st_size));
  }

  uintptr_t bias() const { return bias_; }

  const Symbol* find(std::uintptr_t address) const {
    auto it = by_address_.upper_bound(address);
    if (it == by_address_.begin()) return nullptr;
    --it;
    return address < it->first + std::max<std::size_t>(it->second.size, 1) ? &it->second : nullptr;
  }

 private:
  void read(const unsigned char* image, std::size_t size) {
    const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(image);
    if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) return;
    if (eh->e_shoff == 0 || eh->e_shoff + std::size_t(eh->e_shnum) * sizeof(Elf64_Shdr) > size) return;
    const auto* sections = reinterpret_cast<const Elf64_Shdr*>(image + eh->e_shoff);
    const uintptr_t bias = load_bias();
    bias_ = bias;
    for (int s = 0; s < eh->e_shnum; ++s) {
      if (sections[s].sh_type != SHT_SYMTAB || sections[s].sh_link >= eh->e_shnum) continue;
      const Elf64_Shdr& strings = sections[sections[s].sh_link];
      if (sections[s].sh_offset + sections[s].sh_size > size || strings.sh_offset + strings.sh_size > size) return;
      const auto* symbols = reinterpret_cast<const Elf64_Sym*>(image + sections[s].sh_offset);
      const char* names = reinterpret_cast<const char*>(image + strings.sh_offset);
      const std::size_t count = sections[s].sh_size / sizeof(Elf64_Sym);
      std::string unit;
      for (std::size_t i = 0; i < count; ++i) {
        const Elf64_Sym& sym = symbols[i];
        if (sym.st_name >= strings.sh_size) continue;
        const char* name = names + sym.st_name;
        if (ELF64_ST_TYPE(sym.st_info) == STT_FILE) {
          unit = name;  // the local symbols that follow belong to this file
          continue;
        }
        if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0) continue;
        const bool local = ELF64_ST_BIND(sym.st_info) == STB_LOCAL;
        by_address_[bias + sym.st_value] = Symbol{sym.st_size, name, local ? unit : std::string()};
      }
    }
  }

  // Where the program was loaded (position-independent executables move).
  static uintptr_t load_bias() {
    uintptr_t bias = 0;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* out) {
          *static_cast<uintptr_t*>(out) = info->dlpi_addr;
          return 1;  // the first object is the program itself
        },
        &bias);
    return bias;
  }

  std::map<std::uintptr_t, Symbol> by_address_;
  uintptr_t bias_ = 0;

 public:
  bool empty() const { return by_address_.empty(); }
};

const SymbolTable& symbol_table() {
  static const SymbolTable table;
  return table;
}

std::string demangled(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && d ? d.get() : mangled;
}

// The source lines addr2line gives for the program's address `offset`, innermost
// first: the line, then those of the functions it is inlined into ("variants/op/
// NN_name.cu:76", relative to the source tree); empty when addr2line or the line
// tables are missing.
std::vector<std::string> inlined_lines(std::uintptr_t offset) {
  char command[160];
  std::snprintf(command, sizeof command, "addr2line -i -e /proc/%d/exe 0x%llx 2>/dev/null", int(::getpid()),
                static_cast<unsigned long long>(offset));
  std::vector<std::string> lines;
  FILE* pipe = ::popen(command, "r");
  if (!pipe) return lines;
  char line[1024];
  while (std::fgets(line, sizeof line, pipe)) {
    std::string text = line;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    const std::size_t paren = text.find(" (discriminator");
    if (paren != std::string::npos) text.resize(paren);
    if (text.empty() || text[0] == '?' || text.size() < 2 || text.compare(text.size() - 2, 2, ":0") == 0) continue;
#ifdef WB_SOURCE_DIR
    const std::string root = std::string(WB_SOURCE_DIR) + "/";
    if (text.rfind(root, 0) == 0) text.erase(0, root.size());
#endif
    lines.push_back(text);
  }
  ::pclose(pipe);
  return lines;
}

// Of the lines inlined at `offset`, the innermost one that is not the emulator's own
// (an atomicAdd of the shim names the kernel's line that called it), or "".
std::string source_line(std::uintptr_t offset) {
  std::string found;
  for (const std::string& text : inlined_lines(offset))
    if (found.empty() || found.rfind("emu/", 0) == 0) found = text;
  return found;
}

// "06_vec4_registers.emu.cpp" -> "06_vec4_registers"
std::string stem(std::string file) {
  const std::size_t slash = file.find_last_of('/');
  if (slash != std::string::npos) file.erase(0, slash + 1);
  const std::size_t dot = file.find('.');
  if (dot != std::string::npos) file.resize(dot);
  return file;
}

}  // namespace

bool have_symbol_table() { return !symbol_table().empty(); }

std::optional<KernelSymbol> kernel_symbol(const void* kernel) {
  const Symbol* s = symbol_table().find(reinterpret_cast<std::uintptr_t>(kernel));
  if (!s) return std::nullopt;
  return KernelSymbol{reduced_kernel_name(demangled(s->mangled)), stem(s->unit)};
}

std::string code_location(const void* pc) {
  // The return address follows the call: the instruction before it is the access.
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(pc) - 1;
  const SymbolTable& table = symbol_table();
  const Symbol* s = table.find(address);
  std::string where = s ? reduced_kernel_name(demangled(s->mangled)) : "an unknown function";
  const std::string line = source_line(address - table.bias());
  return line.empty() ? where : where + " at " + line;
}

std::vector<std::string> source_lines(const void* pc) {
  static std::mutex mutex;
  static std::map<const void*, std::vector<std::string>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(pc); it != cache.end()) return it->second;
  }
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(pc) - 1;  // the access, before the return address
  std::vector<std::string> lines;
  for (std::string& line : inlined_lines(address - symbol_table().bias()))
    if (line.rfind("emu/", 0) != 0) lines.push_back(std::move(line));
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(pc, std::move(lines)).first->second;
}

std::string access_site(const void* pc) {
  const std::vector<std::string> lines = source_lines(pc);
  if (lines.empty()) return code_location(pc);
  std::string out = lines.front();
  for (std::size_t i = 1; i < lines.size(); ++i) out += ", inlined in " + lines[i];
  return out;
}

}  // namespace wb::emu
