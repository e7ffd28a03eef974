"""The examples issue 17 names, each as the function a user differentiates and its arguments.

Each function differentiates an example's own loss, built with the example's own parameter
initialisation, on small seeded data (never a download: where an example reads MNIST, random
images of the same kind). Where the loss exists only inside the example's ``__main__`` block, the
few lines that build it are written again here around the example's own functions. Each
``NAME_args()`` returns ``(args, kwargs)`` for ``NAME``, the form ``--args-from`` takes::

    adtrace report adtrace.tools.autograd_examples.drivers:rosenbrock --at "[0.5, -0.3]"
"""

import autograd.numpy as np
import autograd.numpy.random as npr
from autograd import elementwise_grad as egrad
from autograd.misc.flatten import flatten, flatten_func

from .load import module
from .registry import example, one_hot


# -------------------- the examples --------------------


def logistic_regression_args():
    return (npr.RandomState(0).randn(3) * 0.5,), {}


@example("logistic_regression", logistic_regression_args)
def logistic_regression(weights):
    """training_loss on the example's own toy data set"""
    return module("logistic_regression").training_loss(weights)


def neural_net_args():
    rs = npr.RandomState(0)
    params = module("neural_net").init_random_params(0.1, [6, 4, 3], rs=npr.RandomState(0))
    return (params, rs.randn(5, 6), one_hot(rs, 5, 3), 1.0), {}


@example("neural_net", neural_net_args)
def neural_net(params, inputs, targets, L2_reg):
    """log_posterior of a list of (W, b) tuples (random images instead of MNIST)"""
    return module("neural_net").log_posterior(params, inputs, targets, L2_reg)


def rnn_args():
    rs = npr.RandomState(0)
    params = module("rnn").create_rnn_params(input_size=5, state_size=3, output_size=5, rs=npr.RandomState(0))
    inputs = one_hot(rs, (4, 2), 5)  # 4 time steps, 2 sequences, 5 characters
    return (params, inputs, inputs), {}


@example("rnn", rnn_args)
def rnn(params, inputs, targets):
    """rnn_log_likelihood of a dict of parameters (random one-hot strings)"""
    return module("rnn").rnn_log_likelihood(params, inputs, targets)


def lstm_args():
    rs = npr.RandomState(0)
    params = module("lstm").init_lstm_params(input_size=5, state_size=3, output_size=5, rs=npr.RandomState(0))
    inputs = one_hot(rs, (3, 2), 5)
    return (params, inputs, inputs), {}


@example("lstm", lstm_args)
def lstm(params, inputs, targets):
    """lstm_log_likelihood of a dict of parameters (random one-hot strings)"""
    return module("lstm").lstm_log_likelihood(params, inputs, targets)


def _convnet_layers():
    convnet = module("convnet")
    return [convnet.conv_layer((3, 3), 2), convnet.maxpool_layer((2, 2)), convnet.tanh_layer(4),
            convnet.softmax_layer(3)]


def convnet_args():
    rs = npr.RandomState(0)
    n_weights = module("convnet").make_nn_funs((1, 6, 6), _convnet_layers(), 1.0)[0]
    return (rs.randn(n_weights) * 0.1, rs.rand(2, 1, 6, 6), one_hot(rs, 2, 3)), {}


@example("convnet", convnet_args)
def convnet(W_vect, X, T):
    """make_nn_funs' loss: convolution, max pooling, tanh and softmax layers (random images)"""
    loss = module("convnet").make_nn_funs((1, 6, 6), _convnet_layers(), 1.0)[2]
    return loss(W_vect, X, T)


def gaussian_process_args():
    gp = module("gaussian_process")
    X, y = gp.build_toy_dataset(D=1, n_data=6)
    return (0.1 * npr.RandomState(0).randn(4), X, y), {}


@example("gaussian_process", gaussian_process_args)
def gaussian_process(params, X, y):
    """the negative log marginal likelihood of make_gp_funs (RBF covariance, its toy data set)"""
    gp = module("gaussian_process")
    log_marginal_likelihood = gp.make_gp_funs(gp.rbf_covariance, num_cov_params=2)[2]
    return -log_marginal_likelihood(params, X, y)


def gmm_args():
    gmm, data = module("gmm"), module("data")
    init_params = gmm.init_gmm_params(num_components=3, D=2, scale=0.1, rs=npr.RandomState(0))
    pinwheel = data.make_pinwheel(radial_std=0.3, tangential_std=0.05, num_classes=3, num_per_class=4, rate=0.4,
                                  rs=npr.RandomState(0))
    return (_flatten(init_params), pinwheel), {}


@example("gmm", gmm_args)
def gmm(flat_params, data):
    """the flattened objective (flatten_func) of gmm_log_likelihood, as its Newton-CG fit takes it"""
    init_params = module("gmm").init_gmm_params(num_components=3, D=2, scale=0.1, rs=npr.RandomState(0))
    objective = flatten_func(lambda params: -module("gmm").gmm_log_likelihood(params, data), init_params)[0]
    return objective(flat_params)


def _flatten(params):
    return flatten(params)[0]


def variational_autoencoder_args():
    vae, rs = module("variational_autoencoder"), npr.RandomState(0)
    gen = vae.init_net_params(0.1, [2, 4, 6], rs=npr.RandomState(0))
    rec = vae.init_net_params(0.1, [6, 4, 4], rs=npr.RandomState(1))
    images = np.where(rs.rand(3, 6) > 0.5, 1.0, -1.0)  # binarised, as the example's binarise()
    return ((gen, rec), images), {}


@example("variational_autoencoder", variational_autoencoder_args)
def variational_autoencoder(combined_params, images):
    """the objective: -vae_lower_bound / data_dim, with a fresh RandomState(0) per call"""
    gen_params, rec_params = combined_params
    bound = module("variational_autoencoder").vae_lower_bound(gen_params, rec_params, images, npr.RandomState(0))
    return -bound / images.shape[1]


def _funnel_log_density(x, t):
    """The unnormalized log-density black_box_svi's ``__main__`` fits."""
    norm = module("black_box_svi").norm
    mu, log_sigma = x[:, 0], x[:, 1]
    return norm.logpdf(log_sigma, 0, 1.35) + norm.logpdf(mu, 0, np.exp(log_sigma))


def black_box_svi_args():
    return (np.concatenate([-1 * np.ones(2), -5 * np.ones(2)]), 0), {}


@example("black_box_svi", black_box_svi_args)
def black_box_svi(params, t):
    """black_box_variational_inference's objective, built anew per call (its sampler is seeded once)"""
    objective = module("black_box_svi").black_box_variational_inference(_funnel_log_density, 2, 5)[0]
    return objective(params, t)


def fixed_points_args():
    return (2.0,), {}


@example("fixed_points", fixed_points_args, rtol=1e-2)
def fixed_points(a):
    """sqrt by fixed_point of a gradient-descent step, at the example's tol=1e-4"""
    return module("fixed_points").sqrt(a)


def ode_net_args():
    ode_net = module("ode_net")
    y0, t = np.array([2.0, 0.0]), np.linspace(0.0, 0.3, 3)
    targets = ode_net.odeint(ode_net.func, y0, t, args=(np.array([[-0.1, 2.0], [-2.0, -0.1]]),))
    return (ode_net.init_nn_params(0.1, layer_sizes=[2, 4, 2], rs=npr.RandomState(0)), y0, t, targets), {}


@example("ode_net", ode_net_args)
def ode_net(params, y0, t, targets):
    """train_loss: L1_loss of ode_pred, the neural ODE through odeint"""
    ode_net = module("ode_net")
    return ode_net.L1_loss(ode_net.ode_pred(params, y0, t), targets)


def rosenbrock_args():
    return (np.array([0.5, -0.3]),), {}


@example("rosenbrock", rosenbrock_args)
def rosenbrock(x):
    """rosenbrock"""
    return module("rosenbrock").rosenbrock(x)


def tanh_args():
    return (np.linspace(-1.0, 1.0, 4),), {}


@example("tanh", tanh_args)
def tanh(x):
    """egrad(egrad(tanh)): its gradient is the third derivative"""
    return egrad(egrad(module("tanh").tanh))(x)
