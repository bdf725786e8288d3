import COpenSSL
let probeSSL = OpenSSL_version_num()
