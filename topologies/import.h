/* import.h - machine files from what a machine says about itself.
 *
 * `nvidia-smi topo -m` prints a matrix of how each pair of GPUs (and NICs)
 * connect: X, NV# (# bonded NVLinks), PIX (one PCIe switch), PXB (several),
 * PHB (a host bridge), NODE (host bridges of one NUMA node), SYS (across the
 * sockets). import_nvsmi turns it into a machine YAML with parameters
 * (nvlink_gbps, pcie_bw, sys_bw) so every --set works on it:
 *   - an NV# pair gets a direct link of # x nvlink_gbps;
 *   - PIX and PXB pairs share a PCIe switch (PXB's switch hierarchy is
 *     flattened into one), other GPUs hang off their socket's CPU;
 *   - sockets: GPUs related by PIX, PXB, PHB or NODE share one; SYS pairs are
 *     on different ones (two sockets: the SYS graph is 2-coloured, since an
 *     NV# entry hides the pair's PCIe relation, as on a DGX-1).
 * The matrix may sit inside a larger file (a log): the first header line
 * naming GPU0 starts it. Where the file also names its GPUs (nccl-tests'
 * "device 0 [0x4f] Tesla V100-SXM2-16GB", nvidia-smi -L's "GPU 0: NVIDIA
 * H100 80GB HBM3") and baton knows the product, the machine gets `gpu:`,
 * `arch:` (NCCL's tables) and reduce_bw at a third of its HBM rate.
 * Errors name the file and line. */
#ifndef BATON_IMPORT_H
#define BATON_IMPORT_H

#include "../util/err.h"

/* Read path; *yaml gets a malloc'd machine file named name. What the file
 * does not say and the machine assumes (NVLink at line rate, the sockets'
 * link; with no GPU named, a free reduction, PCIe Gen3, Ampere's tables,
 * switches that do not add) is a line of the header starting IMPORT_ASSUMED. */
#define IMPORT_ASSUMED "# assumed: "
int import_nvsmi(const char *path, const char *name, char **yaml, baton_err_t *e);
/* The same, the GPUs' names also read from file gpus (NULL: none):
 * nvidia-smi -L or -q output; they win over names in path. An error if
 * gpus names no GPU. */
int import_nvsmi_gpus(const char *path, const char *gpus, const char *name, char **yaml, baton_err_t *e);

/* NCCL's topology XML (NCCL_TOPO_DUMP_FILE, NCCL_TOPO_FILE): <cpu> sockets
 * joined by sys_bw, <pci> bridges as PCIe switches and devices under them at
 * their link_speed x link_width (class 0x0302/0x0300 a GPU, 0x0207/0x0200 a
 * NIC), <gpu rank> for rank numbers (else PCI bus order), <nvlink count> to
 * a peer GPU (count x nvlink_gbps) or to an NVSwitch (tclass 0x068000: one
 * switch for all), <nic><net speed> NICs; <gpu sm="80"> (all alike) gives
 * NCCL's tables (`arch:`). Errors name file:line. A file of several GPUs
 * with no <nvlink> gets IMPORT_NO_NVLINK in its header: NCCL adds NVLinks
 * from the driver to a NCCL_TOPO_FILE, so files written for it (Azure's)
 * leave them out, and the machine is then PCIe only. */
#define IMPORT_NO_NVLINK "# The file names no NVLink"
int import_nccl_xml(const char *path, const char *name, char **yaml, baton_err_t *e);

#endif
