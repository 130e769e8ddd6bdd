"""Writes nsfwjs's MobileNetV2Mid graph model (extracted by extract.cjs) as an ONNX model for onnxruntime.

Usage: python3 convert.py WORK_DIR OUT_FILE, WORK_DIR holding graph.json and weights.bin.

The tfjs graph has few kinds of node (convolutions with their bias and ReLU6 fused in, depthwise convolutions,
additions, an average pool, a matrix product and a softmax); each is written as its ONNX equivalent, NHWC turned into
ONNX's NCHW once at the input. The weights stay 8-bit as nsfwjs ships them (value = q * scale + min), each turned back
to float32 by a Cast, a Mul and an Add that onnxruntime folds into a constant when it loads the model: a 4.3 MB file
instead of 17 MB. The model's input is what the service has at hand, 224x224 RGB bytes (NHWC, uint8); nsfwjs feeds
the same pixels divided by 255, which the graph now does itself. Its output, "scores", is the five classes' softmax in
nsfwjs's order: Drawing, Hentai, Neutral, Porn, Sexy.
"""
import json
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
TF_PREFIX = 'StatefulPartitionedCall/sequential/keras_layer/StatefulPartitionedCall/StatefulPartitionedCall/StatefulPartitionedCall/predict/'


def short(name):
    return name.replace(TF_PREFIX, '')


def attr_list(node, key):
    return [int(value) for value in node['attr'][key]['list']['i']]


def attr_strings(node, key):
    import base64
    return [base64.b64decode(value).decode() for value in node['attr'].get(key, {}).get('list', {}).get('s', [])]


def attr_string(node, key):
    import base64
    return base64.b64decode(node['attr'][key]['s']).decode()


class Builder:
    def __init__(self, graph, weights):
        self.nodes = []
        self.initializers = []
        self.quantized = {}
        offset = 0
        for entry in graph['weights']:
            count = int(np.prod(entry['shape'])) if entry['shape'] else 1
            quantization = entry['quantization']
            if quantization['dtype'] != 'uint8':
                raise ValueError(f"{entry['name']}: {quantization['dtype']} weights are not handled")
            values = np.frombuffer(weights, dtype=np.uint8, count=count, offset=offset).reshape(entry['shape'])
            self.quantized[entry['name']] = (values, float(quantization['scale']), float(quantization['min']))
            offset += count
        if offset != len(weights):
            raise ValueError(f'{len(weights) - offset} bytes of weights left over')

    def weight(self, name, perm=None):
        """The weight as float32, turned into ONNX's layout: stored 8-bit, dequantized by the graph."""
        values, scale, minimum = self.quantized[name]
        if perm is not None:
            values = np.ascontiguousarray(values.transpose(perm))
        out = short(name)
        self.initializers += [
            numpy_helper.from_array(values, f'{out}/q'),
            numpy_helper.from_array(np.array(scale, dtype=np.float32), f'{out}/scale'),
            numpy_helper.from_array(np.array(minimum, dtype=np.float32), f'{out}/min'),
        ]
        self.add('Cast', [f'{out}/q'], f'{out}/f', to=TensorProto.FLOAT)
        self.add('Mul', [f'{out}/f', f'{out}/scale'], f'{out}/scaled')
        self.add('Add', [f'{out}/scaled', f'{out}/min'], out)
        return out

    def scalar(self, name):
        values, scale, minimum = self.quantized[name]
        return float(values.reshape(-1)[0]) * scale + minimum

    def constant(self, name, value):
        self.initializers.append(numpy_helper.from_array(np.array(value, dtype=np.float32), name))
        return name

    def add(self, op, inputs, output, **attrs):
        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output


def convolution(builder, node, source, depthwise):
    _, weights, bias = node['input']
    strides = attr_list(node, 'strides')
    if attr_list(node, 'dilations') != [1, 1, 1, 1] or attr_string(node, 'data_format') != 'NHWC':
        raise ValueError(f"{node['name']}: unexpected dilations or layout")
    padding = attr_string(node, 'padding')
    fused = attr_strings(node, 'fused_ops')
    if fused not in (['BiasAdd'], ['BiasAdd', 'Relu6']):
        raise ValueError(f"{node['name']}: fused ops {fused}")
    # TF: [kh, kw, in, out] (depthwise: [kh, kw, in, 1]); ONNX: [out, in / group, kh, kw]
    kernel = builder.weight(weights, (2, 3, 0, 1) if depthwise else (3, 2, 0, 1))
    channels = builder.quantized[weights][0].shape[2]
    out = short(node['name'])
    conv = builder.add(
        'Conv',
        [source, kernel, builder.weight(bias)],
        f'{out}/conv' if 'Relu6' in fused else out,
        strides=strides[1:3],
        auto_pad='SAME_UPPER' if padding == 'SAME' else 'VALID',
        **({'group': int(channels)} if depthwise else {}),
    )
    if 'Relu6' in fused:
        builder.add('Clip', [conv, builder.constant(f'{out}/zero', 0.0), builder.constant(f'{out}/six', 6.0)], out)
    return out


def convert(work_dir, out_file):
    with open(f'{work_dir}/graph.json') as file:
        graph = json.load(file)
    with open(f'{work_dir}/weights.bin', 'rb') as file:
        weights = file.read()
    builder = Builder(graph, weights)
    produced = {}
    # the service's pixels: uint8 NHWC, as nsfwjs's before it divides them by 255
    builder.add('Cast', ['pixels'], 'pixels/float', to=TensorProto.FLOAT)
    builder.add('Mul', ['pixels/float', builder.constant('pixels/per255', 1.0 / 255.0)], 'pixels/unit')
    for node in graph['nodes']:
        op = node['op']
        name = node['name']
        inputs = [produced.get(source, source) for source in node.get('input', []) if not source.startswith('^')]
        if op == 'Placeholder':
            produced[name] = 'pixels/unit'
        elif op in ('Mul', 'Sub'):
            # the hub's scaling of [0, 1] to [-1, 1]; then to NCHW, once
            constant = next(source for source in node['input'] if source in builder.quantized)
            data = next(produced[source] for source in node['input'] if source in produced)
            value = builder.constant(short(constant), builder.scalar(constant))
            out = builder.add(op, [data, value], short(name))
            if op == 'Sub':
                out = builder.add('Transpose', [out], f'{short(name)}/nchw', perm=[0, 3, 1, 2])
            produced[name] = out
        elif op == '_FusedConv2D':
            produced[name] = convolution(builder, node, inputs[0], depthwise=False)
        elif op == 'FusedDepthwiseConv2dNative':
            produced[name] = convolution(builder, node, inputs[0], depthwise=True)
        elif op == 'AddV2':
            produced[name] = builder.add('Add', inputs, short(name))
        elif op == 'AvgPool':
            if attr_string(node, 'padding') != 'VALID':
                raise ValueError(f'{name}: padding')
            produced[name] = builder.add('AveragePool', inputs, short(name), kernel_shape=attr_list(node, 'ksize')[1:3],
                                         strides=attr_list(node, 'strides')[1:3])
        elif op == 'Squeeze':
            # NCHW: the spatial axes are 2 and 3
            produced[name] = builder.add('Flatten', inputs, short(name), axis=1)
        elif op == '_FusedMatMul':
            if attr_strings(node, 'fused_ops') != ['BiasAdd'] or node['attr']['transpose_b'].get('b'):
                raise ValueError(f'{name}: unexpected matmul')
            matrix = builder.weight(node['input'][1])
            product = builder.add('MatMul', [inputs[0], matrix], f'{short(name)}/matmul')
            produced[name] = builder.add('Add', [product, builder.weight(node['input'][2])], short(name))
        elif op == 'Softmax':
            produced[name] = builder.add('Softmax', inputs, 'scores', axis=-1)
        elif op == 'Identity':
            produced[name] = inputs[0]
        else:
            raise ValueError(f'{name}: op {op} is not handled')
    model = helper.make_model(
        helper.make_graph(
            builder.nodes,
            'nsfwjs-mobilenet-v2-mid',
            [helper.make_tensor_value_info('pixels', TensorProto.UINT8, ['batch', 224, 224, 3])],
            [helper.make_tensor_value_info('scores', TensorProto.FLOAT, ['batch', 5])],
            builder.initializers,
        ),
        opset_imports=[helper.make_opsetid('', OPSET)],
        producer_name='scripts/nsfw-model/convert.py',
        doc_string='nsfwjs 4.4.0 MobileNetV2Mid (MIT, Infinite Red), converted; classes: Drawing, Hentai, Neutral, Porn, Sexy',
    )
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, out_file)
    print(f'{out_file}: {len(builder.nodes)} nodes')


if __name__ == '__main__':
    convert(sys.argv[1], sys.argv[2])
