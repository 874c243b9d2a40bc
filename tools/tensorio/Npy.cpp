#include "tensorio/Npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kiln::tensorio {

namespace {

struct DescrEntry {
  const char *Code; // kind + item size, without byte-order mark
  int32_t DType;
};

const DescrEntry DescrTable[] = {
    {"f4", KILN_DTYPE_FLOAT},   {"f8", KILN_DTYPE_DOUBLE},
    {"f2", KILN_DTYPE_FLOAT16}, {"i1", KILN_DTYPE_INT8},
    {"i2", KILN_DTYPE_INT16},   {"i4", KILN_DTYPE_INT32},
    {"i8", KILN_DTYPE_INT64},   {"u1", KILN_DTYPE_UINT8},
    {"u2", KILN_DTYPE_UINT16},  {"u4", KILN_DTYPE_UINT32},
    {"u8", KILN_DTYPE_UINT64},  {"b1", KILN_DTYPE_BOOL},
};

/// Finds the value text after 'Key': in a numpy header dict.
bool findValue(const std::string &Header, const std::string &Key, size_t &Pos) {
  size_t K = Header.find("'" + Key + "'");
  if (K == std::string::npos)
    return false;
  size_t Colon = Header.find(':', K);
  if (Colon == std::string::npos)
    return false;
  Pos = Colon + 1;
  while (Pos < Header.size() &&
         std::isspace(static_cast<unsigned char>(Header[Pos])))
    ++Pos;
  return Pos < Header.size();
}

bool parseHeader(const std::string &Header, const std::string &Source,
                 HostTensor &Out, std::string &Err) {
  size_t Pos;
  if (!findValue(Header, "descr", Pos) || Header[Pos] != '\'') {
    Err = Source + ": .npy header has no 'descr'";
    return false;
  }
  size_t End = Header.find('\'', Pos + 1);
  if (End == std::string::npos) {
    Err = Source + ": malformed 'descr' in .npy header";
    return false;
  }
  std::string Descr = Header.substr(Pos + 1, End - Pos - 1);
  std::string Code = Descr;
  if (!Code.empty() && std::strchr("<>|=", Code[0])) {
    // 1-byte types carry '|'; wider ones must be little-endian.
    if (Code[0] == '>' && Code.size() == 3 && Code[2] != '1') {
      Err = Source + ": big-endian .npy dtype '" + Descr + "' is not supported";
      return false;
    }
    Code = Code.substr(1);
  }
  Out.DType = KILN_DTYPE_UNDEFINED;
  for (const DescrEntry &E : DescrTable)
    if (Code == E.Code)
      Out.DType = E.DType;
  if (Out.DType == KILN_DTYPE_UNDEFINED) {
    Err = Source + ": unsupported .npy dtype '" + Descr +
          "' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1)";
    return false;
  }

  if (!findValue(Header, "fortran_order", Pos)) {
    Err = Source + ": .npy header has no 'fortran_order'";
    return false;
  }
  if (Header.compare(Pos, 4, "True") == 0) {
    Err = Source + ": Fortran-order .npy arrays are not supported "
                   "(save with np.ascontiguousarray)";
    return false;
  }

  if (!findValue(Header, "shape", Pos) || Header[Pos] != '(') {
    Err = Source + ": .npy header has no 'shape'";
    return false;
  }
  End = Header.find(')', Pos);
  if (End == std::string::npos) {
    Err = Source + ": malformed 'shape' in .npy header";
    return false;
  }
  Out.Shape.clear();
  std::string Dims = Header.substr(Pos + 1, End - Pos - 1);
  size_t I = 0;
  while (I < Dims.size()) {
    unsigned char C = Dims[I];
    if (std::isspace(C) || C == ',' || C == 'L') {
      ++I;
      continue;
    }
    if (!std::isdigit(C)) {
      Err = Source + ": malformed 'shape' in .npy header";
      return false;
    }
    int64_t D = 0;
    while (I < Dims.size() &&
           std::isdigit(static_cast<unsigned char>(Dims[I]))) {
      if (__builtin_mul_overflow(D, 10, &D) ||
          __builtin_add_overflow(D, Dims[I++] - '0', &D)) {
        Err =
            Source + ": a dimension in the .npy header does not fit in 64 bits";
        return false;
      }
    }
    Out.Shape.push_back(D);
  }
  return true;
}

} // namespace

std::string npyDescr(int32_t DType) {
  for (const DescrEntry &E : DescrTable)
    if (E.DType == DType)
      return std::string(E.Code[1] == '1' ? "|" : "<") + E.Code;
  return "";
}

bool parseNpy(const std::string &Data, const std::string &Source,
              HostTensor &Out, std::string &Err) {
  static const char Magic[] = "\x93NUMPY";
  if (Data.size() < 10 || Data.compare(0, 6, Magic, 6) != 0) {
    Err = Source + ": not a .npy file (bad magic)";
    return false;
  }
  unsigned Major = static_cast<unsigned char>(Data[6]);
  size_t HeaderLen, HeaderStart;
  if (Major == 1) {
    HeaderLen = static_cast<unsigned char>(Data[8]) |
                static_cast<unsigned char>(Data[9]) << 8;
    HeaderStart = 10;
  } else if (Major == 2 || Major == 3) {
    if (Data.size() < 12) {
      Err = Source + ": truncated .npy header";
      return false;
    }
    HeaderLen = 0;
    for (int I = 3; I >= 0; --I)
      HeaderLen = HeaderLen << 8 | static_cast<unsigned char>(Data[8 + I]);
    HeaderStart = 12;
  } else {
    Err = Source + ": unsupported .npy format version " + std::to_string(Major);
    return false;
  }
  if (Data.size() < HeaderStart + HeaderLen) {
    Err = Source + ": truncated .npy header";
    return false;
  }
  if (!parseHeader(Data.substr(HeaderStart, HeaderLen), Source, Out, Err))
    return false;
  uint64_t Need;
  if (!Out.byteSize(Source, Need, Err))
    return false;
  size_t DataStart = HeaderStart + HeaderLen;
  if (Data.size() - DataStart < Need) {
    Err = Source + ": .npy data is truncated: expected " +
          std::to_string(Need) + " bytes for shape " + formatShape(Out.Shape) +
          ", found " + std::to_string(Data.size() - DataStart);
    return false;
  }
  Out.Bytes.assign(Data.begin() + DataStart, Data.begin() + DataStart + Need);
  return true;
}

bool readNpy(const std::string &Path, HostTensor &Out, std::string &Err) {
  std::ifstream In(Path, std::ios::binary);
  if (!In) {
    Err = "cannot open \"" + Path + "\"";
    return false;
  }
  std::ostringstream SS;
  SS << In.rdbuf();
  return parseNpy(SS.str(), Path, Out, Err);
}

bool writeNpy(const std::string &Path, const HostTensor &T, std::string &Err) {
  std::string Descr = npyDescr(T.DType);
  if (Descr.empty()) {
    Err = "cannot write \"" + Path + "\": dtype " + kiln_dtype_name(T.DType) +
          " has no .npy equivalent";
    return false;
  }
  std::string Dict =
      "{'descr': '" + Descr + "', 'fortran_order': False, 'shape': (";
  for (size_t I = 0; I < T.Shape.size(); ++I)
    Dict += (I ? ", " : "") + std::to_string(T.Shape[I]);
  Dict += T.Shape.size() == 1 ? ",), }" : "), }"; // a 1-tuple needs ","
  // numpy pads so that the data starts on a 64-byte boundary.
  bool V2 = Dict.size() + 11 > 65535;
  size_t Prefix = V2 ? 12 : 10;
  size_t Total = (Prefix + Dict.size() + 1 + 63) / 64 * 64;
  Dict.append(Total - Prefix - Dict.size() - 1, ' ');
  Dict += '\n';
  std::string Out = "\x93NUMPY";
  Out += static_cast<char>(V2 ? 2 : 1);
  Out += '\0';
  size_t Len = Dict.size();
  for (size_t I = 0; I < (V2 ? 4u : 2u); ++I)
    Out += static_cast<char>((Len >> (8 * I)) & 0xff);
  Out += Dict;
  std::ofstream F(Path, std::ios::binary);
  if (!F) {
    Err = "cannot open \"" + Path + "\" for writing";
    return false;
  }
  F.write(Out.data(), static_cast<std::streamsize>(Out.size()));
  F.write(reinterpret_cast<const char *>(T.Bytes.data()),
          static_cast<std::streamsize>(T.Bytes.size()));
  if (!F.flush()) {
    Err = "cannot write \"" + Path + "\"";
    return false;
  }
  return true;
}

} // namespace kiln::tensorio
