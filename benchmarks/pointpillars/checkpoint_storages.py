# Compares two ddp3d checkpoints (usage: checkpoint_storages.py A.pth B.pth; exit 1 when they
# differ): every tensor storage of the archive (model, optimizer state,
# RNG states) as a multiset of byte strings. LibTorch keys optimizer state by TensorImpl
# address, so the order of storages and the pickled keys differ between any two processes.
import hashlib, io, struct, sys, zipfile
def storages(p):
    b = open(p, 'rb').read()
    n = struct.unpack('<Q', b[8:16])[0]
    z = zipfile.ZipFile(io.BytesIO(b[16:16 + n]))
    names = [i.filename for i in z.infolist() if '/data/' in i.filename]
    return sorted(hashlib.sha256(z.read(k)).hexdigest() for k in names), b[16 + n:]
a, ta = storages(sys.argv[1]); b, tb = storages(sys.argv[2])
print("%d vs %d storages, the same multiset: %s; after the archive: %s" % (len(a), len(b), a == b, "same" if ta == tb else "differs"))
sys.exit(0 if a == b else 1)
