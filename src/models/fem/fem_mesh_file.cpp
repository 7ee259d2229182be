// Tetrahedral meshes from files (fem_mesh.h, read_tet_mesh_file): gmsh's ASCII .msh 2.2 and 4.1,
// and tetgen's .node + .ele.
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "models/fem/fem_mesh.h"

namespace steer {

namespace {

std::string extension(const std::string& path) {
  const size_t dot = path.find_last_of('.');
  const size_t slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  return path.substr(dot);
}

// the file's lines without comments ('#' to the end) and blank lines, each with its number
struct Lines {
  std::vector<std::pair<int, std::string>> lines;
  size_t at = 0;
  std::string path, key;
  bool done() const { return at >= lines.size(); }
  [[noreturn]] void fail(const std::string& what) const {
    const int n = at < lines.size() ? lines[at].first : (lines.empty() ? 0 : lines.back().first);
    config_fail(key, path + ", line " + std::to_string(n) + ": " + what);
  }
  std::istringstream next(const std::string& expecting) {
    if (done()) fail("the file ends where " + expecting + " was expected");
    return std::istringstream(lines[at++].second);
  }
  std::string peek() const { return done() ? "" : lines[at].second; }
};

Lines read_lines(const std::string& path, const std::string& key, bool hash_comments) {
  std::ifstream f(path, std::ios::binary);
  if (!f) config_fail(key, "cannot open " + path);
  Lines l;
  l.path = path;
  l.key = key;
  std::string s;
  int n = 0;
  while (std::getline(f, s)) {
    ++n;
    if (hash_comments) {
      const size_t h = s.find('#');
      if (h != std::string::npos) s.erase(h);
    }
    if (!s.empty() && s.back() == '\r') s.pop_back();
    if (s.find_first_not_of(" \t") == std::string::npos) continue;
    l.lines.emplace_back(n, s);
  }
  return l;
}

// node tags to the mesh's vertices, keeping only the nodes the tetrahedra use
TetMesh assemble(const std::map<long, std::array<double, 3>>& nodes,
                 const std::vector<std::array<long, 4>>& tets, Lines& l, MeshFileInfo& info) {
  if (tets.empty()) l.fail("the file holds no 4-node tetrahedron");
  std::map<long, int> index;
  for (const auto& t : tets)
    for (long tag : t) {
      if (!nodes.count(tag))
        l.fail("a tetrahedron names node " + std::to_string(tag) +
               ", which the file does not list");
      index.emplace(tag, 0);
    }
  TetMesh m;
  for (auto& [tag, i] : index) {
    i = int(m.vertices.size());
    m.vertices.push_back(nodes.at(tag));
  }
  info.unused_nodes = int(nodes.size() - index.size());
  for (const auto& t : tets)
    m.elements.push_back({index[t[0]], index[t[1]], index[t[2]], index[t[3]]});
  m.pinned.assign(m.vertices.size(), false);
  m.reset_element_data();
  return m;
}

// gmsh element types: the 3-D ones other than the 4-node tetrahedron are refused by name
const char* gmsh_volume_type(int type) {
  switch (type) {
    case 5:
      return "8-node hexahedron";
    case 6:
      return "6-node prism";
    case 7:
      return "5-node pyramid";
    case 11:
      return "10-node tetrahedron";
    case 12:
      return "27-node hexahedron";
    case 13:
      return "18-node prism";
    case 14:
      return "14-node pyramid";
    case 17:
      return "20-node hexahedron";
    case 18:
      return "15-node prism";
    case 19:
      return "13-node pyramid";
    case 29:
      return "20-node tetrahedron";
    case 30:
      return "35-node tetrahedron";
    default:
      return nullptr;
  }
}
// the nodes of the lower-dimensional types gmsh writes most (points, lines, triangles,
// quadrangles and their second-order forms), so that their lines can be skipped; 0: unknown
int gmsh_lower_type_nodes(int type) {
  switch (type) {
    case 15:
      return 1;
    case 1:
      return 2;
    case 8:
      return 3;
    case 2:
      return 3;
    case 9:
      return 6;
    case 3:
      return 4;
    case 10:
      return 9;
    case 16:
      return 8;
    default:
      return 0;
  }
}

TetMesh read_msh(const std::string& path, const std::string& key, MeshFileInfo& info) {
  Lines l = read_lines(path, key, false);
  auto expect = [&](const std::string& what) {
    if (l.done() || l.peek().rfind(what, 0) != 0) l.fail("expected " + what);
    ++l.at;
  };
  expect("$MeshFormat");
  double version = 0;
  int file_type = -1, data_size = 0;
  l.next("the format line") >> version >> file_type >> data_size;
  if (file_type != 0)
    l.fail(
        "a binary .msh file; write it as ASCII (gmsh -format msh41 -save_all -0, or Mesh.Binary = "
        "0)");
  const bool v4 = version >= 4.0 && version < 5.0;
  if (!v4 && !(version >= 2.0 && version < 3.0))
    l.fail("gmsh format " + std::to_string(version) + "; formats 2.2 and 4.1 are read");
  info.format = v4 ? "gmsh 4.1" : "gmsh 2.2";
  std::map<long, std::array<double, 3>> nodes;
  std::vector<std::array<long, 4>> tets;
  while (!l.done()) {
    const std::string section = l.peek();
    ++l.at;
    if (section.rfind("$Nodes", 0) == 0) {
      if (!v4) {
        long n = 0;
        l.next("the node count") >> n;
        for (long q = 0; q < n; ++q) {
          long tag;
          std::array<double, 3> x{};
          if (!(l.next("a node") >> tag >> x[0] >> x[1] >> x[2]))
            l.fail("expected a node: tag x y z");
          nodes[tag] = x;
        }
      } else {
        long blocks = 0, n = 0, lo, hi;
        l.next("the node header") >> blocks >> n >> lo >> hi;
        for (long b = 0; b < blocks; ++b) {
          int dim, ent, param;
          long count = 0;
          l.next("a node block") >> dim >> ent >> param >> count;
          if (param != 0) l.fail("parametric node coordinates are not read");
          std::vector<long> tags(count);
          for (long q = 0; q < count; ++q) l.next("a node tag") >> tags[q];
          for (long q = 0; q < count; ++q) {
            std::array<double, 3> x{};
            if (!(l.next("node coordinates") >> x[0] >> x[1] >> x[2]))
              l.fail("expected node coordinates x y z");
            nodes[tags[q]] = x;
          }
        }
      }
      expect("$EndNodes");
    } else if (section.rfind("$Elements", 0) == 0) {
      auto element = [&](int type, std::istringstream& in) {
        if (type == 4) {
          std::array<long, 4> t{};
          if (!(in >> t[0] >> t[1] >> t[2] >> t[3])) l.fail("expected a tetrahedron's 4 node tags");
          tets.push_back(t);
        } else if (const char* name = gmsh_volume_type(type)) {
          l.fail(std::string("a ") + name + " (gmsh element type " + std::to_string(type) +
                 "): the model takes 4-node tetrahedra only (gmsh: Mesh.ElementOrder = 1, no "
                 "recombination)");
        } else if (gmsh_lower_type_nodes(type) > 0) {
          ++info.skipped_elements;
        } else {
          l.fail("gmsh element type " + std::to_string(type) + " is not read");
        }
      };
      if (!v4) {
        long n = 0;
        l.next("the element count") >> n;
        for (long q = 0; q < n; ++q) {
          std::istringstream in = l.next("an element");
          long tag;
          int type, ntags;
          in >> tag >> type >> ntags;
          for (int t = 0; t < ntags; ++t) {
            long skip;
            in >> skip;
          }
          element(type, in);
        }
      } else {
        long blocks = 0, n = 0, lo, hi;
        l.next("the element header") >> blocks >> n >> lo >> hi;
        for (long b = 0; b < blocks; ++b) {
          int dim, ent, type;
          long count = 0;
          l.next("an element block") >> dim >> ent >> type >> count;
          for (long q = 0; q < count; ++q) {
            std::istringstream in = l.next("an element");
            long tag;
            in >> tag;
            element(type, in);
          }
        }
      }
      expect("$EndElements");
    } else if (section.rfind("$", 0) == 0 && section.rfind("$End", 0) != 0) {
      // another section ($PhysicalNames, $Entities, $NodeData, …): skipped to its end
      const std::string end = "$End" + section.substr(1, section.find_first_of(" \t") - 1);
      while (!l.done() && l.peek().rfind(end, 0) != 0) ++l.at;
      expect(end);
    } else if (section.rfind("$End", 0) != 0) {
      --l.at;
      l.fail("expected a section ($Nodes, $Elements, …)");
    }
  }
  return assemble(nodes, tets, l, info);
}

TetMesh read_tetgen(const std::string& path, const std::string& key, MeshFileInfo& info) {
  const std::string stem = path.substr(0, path.size() - extension(path).size());
  info.format = "tetgen";
  Lines ln = read_lines(stem + ".node", key, true);
  long n = 0;
  int dim = 0, nattr = 0, marker = 0;
  ln.next("the .node header") >> n >> dim >> nattr >> marker;
  if (dim != 3) ln.fail("the .node header gives dimension " + std::to_string(dim) + "; 3 is read");
  std::map<long, std::array<double, 3>> nodes;
  for (long q = 0; q < n; ++q) {
    long tag;
    std::array<double, 3> x{};
    if (!(ln.next("a node") >> tag >> x[0] >> x[1] >> x[2]))
      ln.fail("expected a node: index x y z");
    nodes[tag] = x;
  }
  Lines le = read_lines(stem + ".ele", key, true);
  long m = 0;
  int per = 0;
  le.next("the .ele header") >> m >> per;
  if (per != 4)
    le.fail(std::to_string(per) +
            " nodes per tetrahedron; the model takes 4-node tetrahedra (tetgen without -o2)");
  std::vector<std::array<long, 4>> tets;
  for (long q = 0; q < m; ++q) {
    long tag;
    std::array<long, 4> t{};
    if (!(le.next("a tetrahedron") >> tag >> t[0] >> t[1] >> t[2] >> t[3]))
      le.fail("expected a tetrahedron: index a b c d");
    tets.push_back(t);
  }
  return assemble(nodes, tets, le, info);
}

}  // namespace

TetMesh read_tet_mesh_file(const std::string& path, const std::string& key, MeshFileInfo& info) {
  const std::string ext = extension(path);
  if (ext == ".msh") return read_msh(path, key, info);
  if (ext == ".node" || ext == ".ele") return read_tetgen(path, key, info);
  config_fail(key, "\"" + path + "\": expected a gmsh .msh file or a tetgen .node / .ele file");
}

}  // namespace steer
